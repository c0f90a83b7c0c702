package index

// ParseURL parses an index URL as [Open] does: the connection of a Redis
// URL (servers, cluster, user, password, database, TLS) and its query
// parameters, over o's settings as defaults; memory reports the
// in-process memory index. It is the program's one parser of index URLs:
// commands that need a part of one (its server, its namespace) take it
// from here. Errors wrap [ErrInvalid] and never quote a password.
func ParseURL(rawURL string, o Options) (cfg RedisConfig, memory bool, err error) {
	return parseURL(rawURL, o)
}
