// Package eval measures neardup against labelled data: loaders for the
// third-party evaluation sets in shared/data (read in place, never copied
// into the repository), the measures they are judged by, and the report
// neardup eval writes.
//
// [Build] turns each set into a [Set]: its documents in the order a
// crawler would meet them (originals before their copies), a label for
// any link between two of them, the links recall is measured against, and
// the labelled pairs the per-score curves run over. [Evaluate] streams a
// set through the pipeline neardup scan runs ([Stream]), judges the links
// the events report (precision, recall and F1 per method and kind), scores
// every labelled pair as neardup compare does ([Curve]: ROC AUC and the
// precision–recall curve per score) and adds what the set is for: the PAN
// 2013 text-alignment measures of reported passages ([PAN]), Clough's
// answer categories, Gutenberg's edition pairs, license classes and
// clusters, and for the site sets ([GenerateSites]: pages of several web
// sites, templates around articles, planted near and partial copies, as
// text, as HTML and as HTML with boilerplate inside the article) the
// unique pages flagged, by their rank on their site. A [Report] writes it
// all as Markdown with PNG plots.
// [RunSynth] is DUPNIQ's synthetic sweep: copies with a share replaced
// and OCR-like noise, and where each score and detector breaks.
//
// Everything is deterministic for a given configuration and seed except
// run times. Evaluate and RunSynth start goroutines (GOMAXPROCS for
// sketching and scoring, the pipeline's own) and wait for all of them
// before returning.
package eval
