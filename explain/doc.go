// Package explain renders one comparison of two documents as a
// self-contained HTML page for a person checking a verdict: both texts side
// by side, every copied passage highlighted in both with matching colours
// and linked (click one to scroll the other to it), the verdict, the
// method that decided it, and every score with its threshold.
//
// It only presents data computed elsewhere (neardup compare, or an event's
// passages and the two texts): a [Report] in, HTML out. Passage offsets
// are in Unicode code points of the texts, as in events. All text is
// escaped by html/template, so a document cannot inject markup or script;
// the page loads nothing from the network.
package explain
