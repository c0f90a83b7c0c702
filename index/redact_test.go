package index

import "testing"

// RedactURL masks the user information whatever characters it holds, the
// values of query parameters that may be secrets, and fragments; it keeps
// the scheme, hosts and the parameters Open knows.
func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"memory", "memory"},
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://PASSWORD@h:6379/0", "redis://xxxxx@h:6379/0"},
		{"redis://:pa ss@h", "redis://xxxxx@h"},
		{"redis://user:p%zz@h/0", "redis://xxxxx@h/0"},
		{"redis://:pa#ss@h/0", "redis://xxxxx@h/0"},
		{"redis://:pa?ss@h/0", "redis://xxxxx@h/0"},
		{"redis://:a/b@c@h/0", "redis://xxxxx@h/0"},
		{"rediss://u:p@h:6380/0?namespace=n&timeout=1s", "rediss://xxxxx@h:6380/0?namespace=n&timeout=1s"},
		{"redis+cluster://u:p@h1:1,h2:2,h3:3?shards=8", "redis+cluster://xxxxx@h1:1,h2:2,h3:3?shards=8"},
		{"redis://h/0?password=p&namespace=n", "redis://h/0?password=xxxxx&namespace=n"},
		{"redis://h/0?auth=p&Namespace=n&x", "redis://h/0?auth=xxxxx&Namespace=n&xxxxx"},
		{"redis://h/0#frag", "redis://h/0#xxxxx"},
		{"u:p@h:6379", "xxxxx@h:6379"},
	} {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
