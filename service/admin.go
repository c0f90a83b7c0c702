package service

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
)

// AdminHandler serves the admin endpoint, POST AcceptEmptyPath, on
// http.admin_addr, a listener of its own: nothing on http.addr (metrics
// and health, reachable by Prometheus and the kubelet) can change what
// is decided. accept is called for a POST that passes the checks; its
// ErrNotLost answers 409.
//
// Refused before accept is called:
//   - a request from a browser (an Origin or Sec-Fetch-Site header, which
//     browsers add to every cross-site and same-site POST, fetch and
//     form alike): 403, so a web page cannot post to a loopback or
//     port-forwarded address, DNS rebinding included;
//   - with token set, a request without "Authorization: Bearer <token>":
//     401;
//   - any method but POST: 405.
func AdminHandler(token string, accept func() error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(AcceptEmptyPath, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != "" {
			http.Error(w, "refused: requests from browsers are not accepted on the admin endpoint", http.StatusForbidden)
			return
		}
		if token != "" {
			got := r.Header.Get("Authorization")
			if subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="neardup admin"`)
				http.Error(w, "unauthorized: send Authorization: Bearer <http.admin_token>", http.StatusUnauthorized)
				return
			}
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST accepts a lost index", http.StatusMethodNotAllowed)
			return
		}
		if err := accept(); err != nil {
			if errors.Is(err, ErrNotLost) {
				http.Error(w, "index not lost: nothing to accept", http.StatusConflict)
				return
			}
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "accepted: deciding against an empty index")
	})
	return mux
}
