// Package extract turns raw document bytes into text for sketching: it
// rejects binary content, bounds the size it reads, and pulls the visible
// text out of HTML.
package extract
