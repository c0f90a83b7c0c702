package stream

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecodeJSON(t *testing.T) {
	d := NewDecoder(1000)
	tests := []struct {
		name     string
		in       string
		fallback string
		reason   Reason // "" for success
		check    func(t *testing.T, doc Document)
	}{
		{"text", `{"id":"a","text":"hello world","url":"http://x/","ts":"2026-01-02T03:04:05Z","meta":{"k":1}}`, "", "", func(t *testing.T, doc Document) {
			if doc.ID != "a" || string(doc.Text) != "hello world" || doc.IsHTML || doc.URL != "http://x/" || !doc.TS.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || string(doc.Meta) != `{"k":1}` {
				t.Errorf("decoded %+v", doc)
			}
		}},
		{"html", `{"id":"b","html":"<p>hi</p>"}`, "", "", func(t *testing.T, doc Document) {
			if !doc.IsHTML || string(doc.Text) != "<p>hi</p>" {
				t.Errorf("decoded %+v", doc)
			}
		}},
		{"epoch ms", `{"id":"c","text":"x","ts":1700000000000}`, "", "", func(t *testing.T, doc Document) {
			if doc.TS.UnixMilli() != 1700000000000 {
				t.Errorf("ts %v", doc.TS)
			}
		}},
		{"epoch ms string", `{"id":"c","text":"x","ts":"1700000000000"}`, "", "", nil},
		{"key fallback", `{"text":"x"}`, "key-1", "", func(t *testing.T, doc Document) {
			if doc.ID != "key-1" {
				t.Errorf("id %q", doc.ID)
			}
		}},
		{"null id uses key", `{"id":null,"text":"x"}`, "k", "", nil},
		{"unknown fields ignored", `{"id":"a","text":"x","lang":"en"}`, "", "", nil},
		{"malformed", `{"id":"a","text":`, "", ReasonMalformed, nil},
		{"not an object", `["a"]`, "", ReasonMalformed, nil},
		{"trailing", `{"id":"a","text":"x"} {}`, "", ReasonMalformed, nil},
		{"trailing brace", `{"id":"a","text":"x"}}`, "", ReasonMalformed, nil},
		{"trailing bracket", `{"id":"a","text":"x"}]`, "", ReasonMalformed, nil},
		{"trailing whitespace", "{\"id\":\"a\",\"text\":\"x\"} \r\n\t", "", "", nil},
		{"missing id", `{"text":"x"}`, "", ReasonMissingID, nil},
		{"numeric id", `{"id":7,"text":"x"}`, "", ReasonBadID, nil},
		{"long id", `{"id":"` + strings.Repeat("x", 1025) + `","text":"x"}`, "", ReasonBadID, nil},
		{"neither", `{"id":"a"}`, "", ReasonNoContent, nil},
		{"both", `{"id":"a","text":"x","html":"<p>x</p>"}`, "", ReasonBothBodies, nil},
		{"text not string", `{"id":"a","text":5}`, "", ReasonBadField, nil},
		{"bad ts", `{"id":"a","text":"x","ts":"yesterday"}`, "", ReasonBadTS, nil},
		{"bad meta", `{"id":"a","text":"x","meta":[1]}`, "", ReasonBadMeta, nil},
		{"too large", `{"id":"a","text":"` + strings.Repeat("x", 1001) + `"}`, "", ReasonTooLarge, nil},
		{"empty input", ``, "", ReasonMalformed, nil},
		// Ids that encoding/json would turn into "x\ufffd" are rejected
		// before it can: three different inputs must not share one id.
		{"id with invalid byte ff", "{\"id\":\"x\xff\",\"text\":\"x\"}", "", ReasonBadID, nil},
		{"id with invalid byte fe", "{\"id\":\"x\xfe\",\"text\":\"x\"}", "", ReasonBadID, nil},
		{"id with lone high surrogate", `{"id":"x\ud800","text":"x"}`, "", ReasonBadID, nil},
		{"id with lone low surrogate", `{"id":"x\udc00y","text":"x"}`, "", ReasonBadID, nil},
		{"id with reversed pair", `{"id":"\udc00\ud800","text":"x"}`, "", ReasonBadID, nil},
		{"id with surrogate pair", `{"id":"x\ud83d\ude00","text":"x"}`, "", "", func(t *testing.T, doc Document) {
			if doc.ID != "x😀" {
				t.Errorf("id %q", doc.ID)
			}
		}},
		{"id with escaped backslash", `{"id":"x\\ud800","text":"x"}`, "", "", func(t *testing.T, doc Document) {
			if doc.ID != `x\ud800` {
				t.Errorf("id %q", doc.ID)
			}
		}},
		{"id U+FFFD itself", `{"id":"x\ufffd","text":"x"}`, "", "", nil},
		{"empty id", `{"id":"","text":"x"}`, "", ReasonBadID, nil},
		{"empty id with a key", `{"id":"","text":"x"}`, "key", ReasonBadID, nil},
		{"ts beyond year 9999", `{"id":"b","ts":9223372036854775807,"text":"x"}`, "", ReasonBadTS, nil},
		{"ts string beyond year 9999", `{"id":"b","ts":"253402300800000","text":"x"}`, "", ReasonBadTS, nil},
		{"ts before year 0", `{"id":"b","ts":-62167219200001,"text":"x"}`, "", ReasonBadTS, nil},
		{"ts year 0 by offset", `{"id":"b","ts":"0000-01-01T00:30:00+01:00","text":"x"}`, "", ReasonBadTS, nil},
		{"ts last ms of 9999", `{"id":"b","ts":253402300799999,"text":"x"}`, "", "", nil},
		{"ts zero time", `{"id":"b","ts":"0001-01-01T00:00:00Z","text":"x"}`, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := d.DecodeJSON([]byte(tt.in), tt.fallback)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if tt.check != nil {
					tt.check(t, doc)
				}
				return
			}
			var inv *InvalidError
			if !errors.As(err, &inv) || inv.Reason != tt.reason || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want reason %s", err, tt.reason)
			}
		})
	}
}

func TestDecodeRecord(t *testing.T) {
	d := NewDecoder(100)
	doc, err := d.DecodeRecord([]byte("k1"), []byte("plain body"), "text/plain; charset=utf-8")
	if err != nil || doc.ID != "k1" || string(doc.Text) != "plain body" {
		t.Errorf("text/plain record: %+v, %v", doc, err)
	}
	if _, err := d.DecodeRecord(nil, []byte("plain"), "text/plain"); err == nil {
		t.Error("text/plain without key accepted")
	}
	doc, err = d.DecodeRecord([]byte("k2"), []byte(`{"text":"json body"}`), "")
	if err != nil || doc.ID != "k2" {
		t.Errorf("JSON record with key fallback: %+v, %v", doc, err)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(`{"id":"a","text":"x","ts":1,"meta":{}}`), "k")
	f.Add([]byte(`{"id":"\xff","html":"<p>"}`), "")
	f.Add([]byte(`{"id":"b","ts":9223372036854775807,"text":"x"}`), "")
	f.Add([]byte(`{"id":"x\ud800","text":"x"}`), "")
	d := NewDecoder(1 << 16)
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		doc, err := d.DecodeJSON(b, key)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if err := CheckID(doc.ID); err != nil {
			t.Fatalf("accepted id %q: %v", doc.ID, err)
		}
		if _, err := doc.TS.MarshalJSON(); err != nil {
			t.Fatalf("accepted ts %v that events cannot encode: %v", doc.TS, err)
		}
	})
}
