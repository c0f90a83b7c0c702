package eval

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
)

// The templates of the site set. All of this text is written here, for
// the set: three consent-platform notices that several sites share, and
// each site's header, menu, share line, long-template blocks, footer and
// in-article boilerplate.

// consentNotices are the notices of three consent platforms; a site shows
// one of them, verbatim, as sites using one platform do.
var consentNotices = []string{
	"We value your privacy. We and our 812 partners store and access information on your device, such as cookies and unique identifiers, and process personal data such as browsing behaviour to personalise ads and content, measure ads and content, understand audiences and develop services. Some partners process data on the basis of legitimate interest, which you can object to under Manage preferences. Your choices apply to this site only and you can change them at any time through the Privacy settings link at the bottom of the page. Selecting Accept all means you agree to all of these purposes.",
	"This website uses cookies. Strictly necessary cookies keep the site working; we would also like to set optional analytics cookies to see how visitors use the pages, functional cookies to remember your settings, and advertising cookies set by third parties to show you relevant offers on this and other websites. We will not set optional cookies unless you enable them. Using this tool will set a cookie on your device to remember your preferences. For more detailed information about the cookies we use, see our Cookie Policy.",
	"Your privacy matters to us. With your consent, we and selected vendors use precise geolocation data and identification through device scanning, and store or access information on a device, to serve personalised advertising, measure its performance, obtain audience insights and improve our products. You may withdraw your consent or object to processing based on legitimate interest at any time by clicking Cookie settings in the footer of every page. Declining will not stop ads from appearing but will make them less relevant to you.",
}

// siteTemplates returns the sites of the set. r orders nothing yet; it is
// taken so that a later variation of the templates stays seeded.
func siteTemplates(_ *rand.Rand) []*Site {
	return []*Site{
		{
			Name: "The Evening Ledger", Domain: "eveningledger.example", Tagline: "Independent news and long reads since 1887",
			Menu:    []string{"News", "World", "Culture", "Books", "Opinion", "Science", "Travel", "Puzzles"},
			Consent: consentNotices[0], ConsentTop: true,
			Share:   "Share this article: Facebook · X · LinkedIn · WhatsApp · Email · Copy link · Print",
			Related: 6, RelatedHeader: "More from The Evening Ledger",
			Extras: []string{
				"Most read this week\nThe quiet revival of the village bookshop\nWhy the harbour bridge will close for a year\nTen walks along the old canal towpaths\nA cook's guide to winter markets\nThe council vote that split the high street",
				"The Ledger Briefing. Get the day's essential stories, hand-picked by our editors, delivered to your inbox every weekday at 7am. Plus our Saturday long read, crosswords and the best of the arts. Enter your email address to sign up. You can unsubscribe at any time, and we will never share your address with advertisers.",
			},
			Footer:  "© 2026 Evening Ledger Media Group Ltd. All rights reserved. Registered in England and Wales, company number 0418273, registered office 14 Printing House Yard, London. The Evening Ledger is a member of the Independent Press Standards Organisation and abides by the Editors' Code of Practice. Complaints about editorial content should be sent to the readers' editor. About us · Contact · Advertise · Careers · Terms and conditions · Privacy policy · Cookie policy · Privacy settings · Accessibility · Sitemap · Corrections",
			Boiler:  "Before you read on: The Evening Ledger has no owner to answer to and no shareholders to please. Our journalism is paid for by readers like you, and it stays free for everyone because of them. If you value independent reporting, please consider supporting us with a monthly contribution; it takes less than a minute, you can cancel whenever you like, and every pound goes into reporting. Thank you for reading, and for helping to keep the Ledger open to all.",
			Authors: []string{"Margaret Oyelaran", "Tom Whitcombe", "Priya Raman", "Daniel Achterberg"},
			Layout:  0, weight: 0.2,
		},
		{
			Name: "Harbour Review", Domain: "harbourreview.example", Tagline: "A magazine of essays, fiction and criticism",
			Menu:    []string{"Essays", "Fiction", "Reviews", "Archive", "Issues", "About"},
			Consent: consentNotices[0],
			Share:   "Share: X · Facebook · Email",
			Related: 5, RelatedHeader: "You might also enjoy",
			Extras: []string{
				"About the Harbour Review. Founded by a group of teachers and fishermen in a harbour town, the Review publishes essays, short fiction and criticism four times a year in print and every week online. We pay every contributor and read unsolicited submissions twice a year, in March and in September.",
			},
			Footer:  "Harbour Review is published by the Harbour Review Trust, a registered charity (no. 1093384). Text © the authors; design © Harbour Review Trust 2026. Submissions · Subscribe · Stockists · Privacy · Privacy settings · Terms of use",
			Boiler:  "Editor's note: this piece appears in our reading room, which is funded by our subscribers. A year's subscription brings four print issues, the full digital archive going back to our first number, and invitations to our readings in the harbour town and online. Subscribers keep the Review independent and allow us to pay every writer fairly. If you have enjoyed what you read here, please consider joining them from the Subscribe page; students and readers on low incomes pay half.",
			Authors: []string{"Eilidh MacAskill", "Jonah Feld", "Rosa Quintero"},
			Layout:  1, weight: 0.16,
		},
		{
			Name: "Quill & Lantern", Domain: "quillandlantern.example", Tagline: "Notes from a reader's desk",
			Menu:    []string{"Home", "Posts", "Reading list", "Contact"},
			Consent: consentNotices[2],
			Share:   "Liked this? Share it with a friend.",
			Related: 3, RelatedHeader: "Related posts",
			Footer:  "Quill & Lantern is a personal blog. Views are my own. Powered by a small static site generator. © 2026. Privacy · RSS",
			Boiler:  "A small request: this blog has no ads and no sponsors, and I would like to keep it that way. If these notes have been useful to you, you can buy me a coffee through the link in the sidebar or share a post with someone who might enjoy it. Every contribution goes towards hosting and the occasional second-hand book. New posts go out by email about twice a month; you can subscribe below and leave whenever you like.",
			Authors: []string{"Hannah Lees"},
			Layout:  0, weight: 0.14,
		},
		{
			Name: "Northgate Daily", Domain: "northgatedaily.example", Tagline: "News for Northgate and the valley",
			Menu:    []string{"Local", "Sport", "Business", "Schools", "Weather", "Events", "Obituaries", "Jobs", "Property"},
			Consent: consentNotices[1], ConsentTop: true,
			Share:   "Share on Facebook | Share on X | Share by email | Print this page",
			Related: 6, RelatedHeader: "Trending in Northgate",
			Extras: []string{
				"What's on this weekend\nFarmers' market, Saturday 8am to 1pm, Market Square\nValley choir spring concert, St Anne's church\nJunior football finals at Riverside Park\nLibrary reading hour for under-fives, Sunday 10am\nCraft fair in the old corn exchange",
				"Never miss a story. Download the Northgate Daily app for breaking news alerts, live traffic and travel updates, the weather where you are and the day's paper as a digital edition. Available for phones and tablets. Already a print subscriber? Your digital access is included: activate it with the code on your delivery receipt.",
				"Advertise with us. Reach more than 80,000 readers across Northgate and the valley every week in print and online. Ask about our packages for local businesses, recruitment and family notices.",
			},
			Footer:  "Northgate Daily is part of Valley Local Media Ltd. © 2026 Valley Local Media Ltd, Station Road, Northgate. All rights reserved. No part of this site may be reproduced without our written permission. We are regulated by the Independent Press Standards Organisation. Contact us · Terms · Privacy notice · Cookie policy · Manage cookies · Accessibility statement · Complaints · Archive",
			Boiler:  "Support local journalism. For the price of a cup of coffee a month you can help us keep reporters at council meetings, in the magistrates' court and on the touchline every weekend. Northgate Daily subscribers get unlimited access to every story on the website and app, fewer adverts, and a digital copy of the printed paper each morning. Local news matters, and it only survives if local people pay for it. Subscribe today and get your first three months at half price.",
			Authors: []string{"Gareth Pryce", "Siobhan Kerr", "Ade Okafor", "Lucy Tranter", "Mark Bellamy"},
			Layout:  2, weight: 0.14,
		},
		{
			Name: "Readers' Commons", Domain: "readerscommons.example", Tagline: "Where readers talk about books",
			Menu:    []string{"Discussions", "Book clubs", "Recommendations", "Members", "Help"},
			Consent: consentNotices[1],
			Share:   "Share thread: copy link · email · X",
			Related: 4, RelatedHeader: "Similar threads",
			Footer:  "Readers' Commons is run by volunteers. Posts are the views of their authors and are shared under the community licence in our terms. © 2026 Readers' Commons. Community guidelines · Terms · Privacy · Cookie settings · Report a problem",
			Boiler:  "Posting guidelines reminder: please keep discussion on topic and mark any plot spoilers with the spoiler button before you post. Quotations from books still under copyright should be kept short and credited. Be kind to new members, who may be reading these books for the first time. Moderators may edit or remove posts that break these rules, and repeated breaches can lead to a temporary suspension. If you see something that worries you, use the report link under the post.",
			Authors: []string{"bookworm_ann", "captain_ahab_fan", "mr_darcy_reads", "elementary88", "white_rabbit"},
			Layout:  1, weight: 0.1,
		},
		{
			Name: "The Classic Page", Domain: "theclassicpage.example", Tagline: "Great books, one chapter at a time",
			Menu:    []string{"Home", "Authors", "Titles", "Random chapter"},
			Consent: consentNotices[2], ConsentTop: true,
			Share:   "Share this chapter",
			Footer:  "Texts on The Classic Page are in the public domain in the United States. © 2026 The Classic Page for the site design. Privacy · Cookie settings",
			Boiler:  "Reading tip from The Classic Page: create a free account to keep your place in every book, collect your favourite passages, and get a gentle reminder when a new chapter of the book you are following is published. Members can also switch to our large-print and dark reading modes and download any chapter as an e-book for offline reading. Accounts are free forever, carry no advertising and take under a minute to set up. We never sell or share your details.",
			Authors: []string{"The Classic Page editors"},
			Layout:  0, weight: 0.1,
		},
		{
			Name: "Marginalia Weekly", Domain: "marginaliaweekly.example", Tagline: "Criticism, history and the odd digression",
			Menu:    []string{"This week", "Criticism", "History", "Letters", "Podcast", "Shop"},
			Consent: consentNotices[0],
			Share:   "Share: Bluesky · Mastodon · Facebook · Email",
			Related: 5, RelatedHeader: "Further reading",
			Extras: []string{
				"The Marginalia newsletter arrives on Friday mornings with the week's essays, a letter from the editor and one recommendation from our back pages. It is free, and we keep it short.",
			},
			Footer:  "Marginalia Weekly Ltd, 3 Bindery Lane, Oxford. © 2026 Marginalia Weekly. Reproduction in whole or in part without permission is prohibited. Contact · Advertising · Privacy · Privacy settings · Terms",
			Boiler:  "A note on affiliate links: Marginalia Weekly may earn a small commission when you buy a book through the links on this page, at no extra cost to you. These commissions help pay for our writers and never influence which books we choose to discuss. Where possible we link to independent bookshops rather than large online retailers. Review copies are sometimes sent to us by publishers; we say so when they are, and we keep no copy we did not pay for.",
			Authors: []string{"Felix Armitage", "Ngozi Eze", "Clara Holm"},
			Layout:  2, weight: 0.08,
		},
		{
			Name: "Old Books Online", Domain: "oldbooks.example", Tagline: "Free classic literature",
			Menu:    []string{"Browse", "Search", "About"},
			Share:   "Bookmark this page",
			Related: 3, RelatedHeader: "Next in this collection",
			Footer:  "Old Books Online. All texts are believed to be in the public domain. Contact the webmaster with corrections.",
			Boiler:  "Disclaimer: the texts on this site were transcribed by volunteers from old printed editions and may contain errors of spelling, punctuation or layout that were not in the original books. They are offered as they are, without any warranty, for private reading and study. Please check an authoritative printed edition before quoting from them in published work. If you find a mistake, send the page address and a short description to the webmaster and we will correct it in the next update of the collection.",
			Authors: []string{"transcribed by volunteers"},
			Layout:  1, weight: 0.08,
		},
	}
}

// htmlEscape escapes text for HTML.
func htmlEscape(s string) string { return html.EscapeString(s) }

// HTML renders the page as an HTML document. With boiler, the site's
// boilerplate paragraph is put inside the article, before paragraph
// BoilerAt.
func (p *Page) HTML(boiler bool) []byte {
	if p.chrome != nil {
		return p.chromeHTML()
	}
	if p.plain {
		return p.plainHTML()
	}
	st := p.Site
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	esc := html.EscapeString
	link := func(text string) string {
		slug := strings.ToLower(strings.Join(strings.Fields(text), "-"))
		return fmt.Sprintf(`<a href="/%s">%s</a>`, esc(slug), esc(text))
	}
	w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s | %s</title>\n", esc(p.Title), esc(st.Name))
	w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"stylesheet\" href=\"/static/site.css\">\n</head>\n<body>\n")
	consent := func() {
		if st.Consent != "" {
			w("<div id=\"consent-banner\" class=\"cmp-banner\" role=\"dialog\" aria-label=\"Cookie consent\">\n<p>%s</p>\n<button>Accept all</button> <button>Reject all</button> <a href=\"/privacy-settings\">Manage preferences</a>\n</div>\n", esc(st.Consent))
		}
	}
	if st.ConsentTop {
		consent()
	}
	var menu []string
	for _, m := range st.Menu {
		menu = append(menu, "<li>"+link(m)+"</li>")
	}
	related := func() {
		if len(p.Related) == 0 {
			return
		}
		var items []string
		for _, t := range p.Related {
			items = append(items, "<li>"+link(t)+"</li>")
		}
		w("<h2>%s</h2>\n<ul class=\"related-links\">\n%s\n</ul>\n", esc(st.RelatedHeader), strings.Join(items, "\n"))
	}
	extras := func() {
		for _, x := range st.Extras {
			lines := strings.Split(x, "\n")
			if len(lines) == 1 {
				w("<div class=\"promo\"><p>%s</p></div>\n", esc(x))
				continue
			}
			var items []string
			for _, l := range lines[1:] {
				items = append(items, "<li>"+link(l)+"</li>")
			}
			w("<div class=\"widget\"><h3>%s</h3><ol>%s</ol></div>\n", esc(lines[0]), strings.Join(items, ""))
		}
	}
	article := func() {
		w("<h1>%s</h1>\n<p class=\"byline\">By <span class=\"author\">%s</span> · <time datetime=\"%s\">%s</time></p>\n",
			esc(p.Title), esc(p.Author), p.Date.Format("2006-01-02"), p.Date.Format("2 January 2006"))
		for i, par := range p.Paragraphs {
			if boiler && i == p.BoilerAt {
				w("<p>%s</p>\n", esc(st.Boiler))
			}
			w("<p>%s</p>\n", esc(paragraphText(par)))
		}
		if boiler && p.BoilerAt >= len(p.Paragraphs) {
			w("<p>%s</p>\n", esc(st.Boiler))
		}
	}
	share := fmt.Sprintf("<div class=\"share-buttons\">%s</div>\n", esc(st.Share))
	switch st.Layout {
	case 0: // semantic
		w("<header class=\"site-header\">\n<a class=\"logo\" href=\"/\">%s</a>\n<p class=\"tagline\">%s</p>\n<nav><ul>%s</ul></nav>\n</header>\n", esc(st.Name), esc(st.Tagline), strings.Join(menu, ""))
		w("<main>\n<article>\n")
		article()
		w("</article>\n%s<aside class=\"sidebar\">\n", share)
		related()
		extras()
		w("</aside>\n</main>\n<footer class=\"site-footer\"><p>%s</p></footer>\n", esc(st.Footer))
	case 1: // divs and class names only
		w("<div class=\"top-bar\"><div class=\"brand\">%s</div><div class=\"slogan\">%s</div></div>\n<div class=\"menu\"><ul>%s</ul></div>\n", esc(st.Name), esc(st.Tagline), strings.Join(menu, ""))
		// As a blog engine's plugins do, the share line and the related
		// posts sit inside the entry's container, after the article.
		w("<div id=\"content\" class=\"post\">\n<div class=\"entry-content\">\n")
		article()
		w("%s<div class=\"related-posts\">\n", share)
		related()
		w("</div>\n</div>\n</div>\n<div class=\"sidebar\">\n")
		extras()
		w("</div>\n<div class=\"footer\"><p>%s</p></div>\n", esc(st.Footer))
	default: // sidebar before the article
		w("<header><h2 class=\"site-name\">%s</h2><p>%s</p></header>\n<nav class=\"main-nav\"><ul>%s</ul></nav>\n<div class=\"layout\">\n<aside class=\"rail\">\n", esc(st.Name), esc(st.Tagline), strings.Join(menu, ""))
		related()
		extras()
		w("</aside>\n<main id=\"main\"><article class=\"story\">\n")
		article()
		w("%s</article></main>\n</div>\n<footer><p>%s</p></footer>\n", share, esc(st.Footer))
	}
	if !st.ConsentTop {
		consent()
	}
	w("</body>\n</html>\n")
	return b.Bytes()
}
