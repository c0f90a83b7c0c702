package config

import "github.com/neardup/neardup/sketch"

// BandsRows returns the LSH bands and rows: the configured ones, or those
// sketch.BandsWeighted chooses for k, the threshold and the recall weight.
// It resolves a setting (config check shows its value), so it stays here;
// the components these settings build are built in one place,
// pipeline/fromconfig.go.
func (c *Config) BandsRows() (b, r int) {
	if c.Sketch.Bands > 0 {
		return c.Sketch.Bands, c.Sketch.Rows
	}
	return sketch.BandsWeighted(c.Sketch.K, c.Sketch.Threshold, c.Sketch.RecallWeight)
}
