package sketch

// retainTokens is the most tokens whose scratch a [Sketcher] or a reused
// [Features] keeps between documents (about 350 KB of English text): the
// buffers of a longer document are dropped by Trim, so that a worker does
// not hold a 16 MiB document's working memory (hundreds of MiB) while it
// decides small ones. Documents up to this size reuse their buffers as
// before and allocate nothing.
const retainTokens = 1 << 16

// shrink returns s, or nil when its capacity is over keep elements.
func shrink[S ~[]E, E any](s S, keep int) S {
	if cap(s) > keep {
		return nil
	}
	return s
}

// Trim drops the scratch buffers that a long document grew (over
// [retainTokens] tokens), keeping those of ordinary documents. Call it
// once the last document's results ([Sketcher.Tokens],
// [Sketcher.ShingleSeq]) are no longer needed.
func (s *Sketcher) Trim() {
	const n = retainTokens
	s.tok.trim()
	s.stok.trim()
	// keys and pos are also countTokens' table: up to 4 entries a token.
	s.keys, s.pos, s.once, s.dist = shrink(s.keys, 4*n), shrink(s.pos, 4*n), shrink(s.once, n), shrink(s.dist, n)
	s.slots = shrink(s.slots, n)
	s.set = shrink(s.set, 4*n) // countDistinct's table: up to 4 entries a shingle
	s.sort.tmpK, s.sort.tmpV = shrink(s.sort.tmpK, n), shrink(s.sort.tmpV, n)
	s.gram, s.ends, s.sum = shrink(s.gram, 16*n), shrink(s.ends, 2*n), shrink(s.sum, 16*n)
	s.seq, s.sgrams = shrink(s.seq, n), shrink(s.sgrams, 16*n)
	s.im.terms, s.im.ranked, s.im.bytes = shrink(s.im.terms, n), shrink(s.im.ranked, n), shrink(s.im.bytes, 16*n)
	s.norm.decoded, s.norm.normed = shrink(s.norm.decoded, 16*n), shrink(s.norm.normed, 16*n)
	s.sents, s.split.buf = shrink(s.sents, n), shrink(s.split.buf, 16*n)
}

func (t *Tokens) trim() {
	const n = retainTokens
	t.Hash, t.Off, t.SrcEnd, t.End = shrink(t.Hash, n), shrink(t.Off, n), shrink(t.SrcEnd, n), shrink(t.End, n)
	t.HasDigit, t.Text = shrink(t.HasDigit, n), shrink(t.Text, 16*n)
	t.runeOff, t.runeEnd = shrink(t.runeOff, n), shrink(t.runeEnd, n)
}

// Trim drops the slices of f that a long document grew (over
// [retainTokens] entries), for a Features value reused as scratch; its
// contents are unchanged only when nothing was dropped, so call it once
// f's results have been used or copied.
func (f *Features) Trim() {
	const n = retainTokens
	f.Shingles, f.Unique, f.Text = shrink(f.Shingles, n), shrink(f.Unique, n), shrink(f.Text, 16*n)
	f.Passage.Fp, f.Passage.Starts, f.Passage.Ends = shrink(f.Passage.Fp, n), shrink(f.Passage.Starts, n), shrink(f.Passage.Ends, n)
	f.Sentences.Items = shrink(f.Sentences.Items, n)
}
