// Package report renders metrics results: plain text that fits in 80 columns
// and reads well in a mail, markdown for bug trackers, JSON with stable keys
// and units, and HTML with SVG plots.
//
// It imports metrics, timeline and topology; nothing imports it but cmd.
package report
