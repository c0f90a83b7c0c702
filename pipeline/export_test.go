package pipeline

// NoSettle turns candidate settling off (settle.go) for the external
// tests: every candidate is verified, so a pipeline's events depend on the
// index alone, not on the verdicts this process gave before.
func NoSettle(p *Pipeline) { p.noSettle = true }
