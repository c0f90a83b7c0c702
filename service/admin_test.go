package service

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index/redistest"
	"github.com/neardup/neardup/internal/synth"
)

// Issue 38, point 3: nobody who can reach the metrics port can accept a
// lost index. The admin endpoint has a listener of its own
// (http.admin_addr) and, here, a bearer token (http.admin_token); a
// cross-origin form POST — what any web page can make a browser send — to
// the metrics port or to the admin port, a POST without the token and a
// GET all leave the index lost; the POST with the token accepts it.
func TestServeAdminEndpoint(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{}) // no persistence
	cl := startKafka(t, 1)
	const token = "admin-t0ken-38"
	c := loadConfig(t, cl.Brokers, "index.url", "redis://"+srv.Addr+"/0?namespace=admin", "index.timeout", "500ms",
		"http.admin_token", token)
	in := start(t, c, openStore(t, c))
	in.waitReady(t, http.StatusOK, 30*time.Second)
	docs := synth.Corpus(synth.Config{Docs: 20, Seed: 38})
	cl.Produce(t, inTopic, docMessages(t, docs)...)
	waitEvents(t, cl, idsOf(docs), time.Minute)
	srv.Restart() // the index is lost
	waitLost(t, in, 30*time.Second)

	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"},
		"Origin": {"http://attacker.example"}, "Sec-Fetch-Site": {"cross-site"}}
	for _, tt := range []struct {
		name   string
		method string
		addr   string
		header http.Header
		want   int
	}{
		{"cross-origin form POST to the metrics port", http.MethodPost, in.Addr(), form, http.StatusNotFound},
		{"POST with the token to the metrics port", http.MethodPost, in.Addr(), http.Header{"Authorization": {"Bearer " + token}}, http.StatusNotFound},
		{"cross-origin form POST to the admin port", http.MethodPost, in.AdminAddr(), form, http.StatusForbidden},
		{"cross-origin form POST with the token", http.MethodPost, in.AdminAddr(), http.Header{"Authorization": {"Bearer " + token}, "Origin": {"http://attacker.example"}}, http.StatusForbidden},
		{"POST without the token", http.MethodPost, in.AdminAddr(), nil, http.StatusUnauthorized},
		{"POST with a wrong token", http.MethodPost, in.AdminAddr(), http.Header{"Authorization": {"Bearer " + token + "x"}}, http.StatusUnauthorized},
		{"GET with the token", http.MethodGet, in.AdminAddr(), http.Header{"Authorization": {"Bearer " + token}}, http.StatusMethodNotAllowed},
	} {
		if code, body := httpDo(t, tt.method, tt.addr, AcceptEmptyPath, tt.header); code != tt.want {
			t.Errorf("%s: %d %q, want %d", tt.name, code, body, tt.want)
		}
	}
	// The sleep is the scenario: no condition marks "the loss was not
	// accepted", so a wrongly accepted one is given a second to show.
	time.Sleep(time.Second)
	if code, body := in.httpGet(t, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "index lost") {
		t.Fatalf("/readyz %d %q: the loss was accepted by a refused request", code, body)
	}
	if code, body := httpDo(t, http.MethodPost, in.AdminAddr(), AcceptEmptyPath, http.Header{"Authorization": {"Bearer " + token}}); code != http.StatusOK {
		t.Fatalf("POST with the token: %d %q", code, body)
	}
	in.waitReady(t, http.StatusOK, 30*time.Second)
	if err := in.stop(t); err != nil {
		t.Fatal(err)
	}
}

// httpDo sends a request with a small form body and the given headers to
// path at addr and returns the status and body.
func httpDo(t testing.TB, method, addr, path string, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader("accept=1"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
