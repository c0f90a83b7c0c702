// Package corpus builds the benchmark corpora: crawl-like streams of real
// text with planted noisy copies, and the ground truth that scores a
// detector's reported pairs against them.
//
// A real-text corpus ([Build]) cuts the Gutenberg e-texts (one edition of
// each work, so that no two chunks are editions of one text) and the PAN13
// source documents of the shared data folder into chunks of about 5 KB of
// whole paragraphs. Each chunk is an original; later in the stream come
// its copies: exact ones, near ones (words substituted, deleted and
// inserted, case and punctuation noise, typographic quotes) and partial
// ones (a passage of it embedded in other text). [Config.Dup] sets the
// share of documents that are copies (the density sweep) and
// [Config.Cluster] the documents per cluster (the cluster-size sweep, from
// 2 to thousands of copies of one source).
//
// A chunk that shares more than 2% of its word 5-shingles with the chunks
// read before it is dropped (the PAN13 sources repeat one another's web
// text), which leaves 914 chunks of 5 KB; two originals share at most a
// few percent of their shingles. When a corpus needs more originals,
// or the other text a partial copy's passage sits in, further chunks come
// from the same texts under a vocabulary cipher: every word replaced by
// another of about the same frequency (a seeded permutation within blocks
// of 64 words by frequency rank), case and punctuation kept. The result
// keeps real text's sentence shapes, word lengths and Zipf curve but
// shares no shingles with the plain text or another cipher, so it plants
// no duplicate that the ground truth does not list. [Corpus.Stats] says how
// many originals are enciphered.
//
// [Sites] renders the site pages of the boilerplate evaluation
// (eval.GenerateSites, the pages of `neardup eval sites`) as a corpus, and
// [Generated] the project's generated corpus (internal/synth), the second
// column of every benchmark table.
//
// Everything derives from the seed: the same configuration and data give
// the same corpus, byte for byte. [Corpus.Write] writes the documents as
// JSON lines (the input of neardup scan) and the ground truth beside them
// ([TruthPath]); [Read] reads both back; [Corpus.Score] gives precision
// and recall of a set of reported (later, earlier) pairs.
package corpus
