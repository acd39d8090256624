package tui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// noticeKind is what a message on the annotate screen's message line is tied to.
type noticeKind int

const (
	// noticePlain is about the item it was said on ("missing: …", "submitted · e to
	// edit"), or about no item (a queue error); it goes when another item is shown.
	noticePlain noticeKind = iota
	// noticeForNext confirms what happened to the item being left ("submitted"): it stays
	// for the next item shown, and then goes with that one.
	noticeForNext
	// noticeConfirm is such a confirmation beside the item it was kept for (or on the item
	// it is about, "flagged"): old news once the annotator acts, so opening the reader
	// drops it.
	noticeConfirm
)

// notice is the annotate screen's message line: a text, its style, and the item it is tied
// to, so that it is never shown beside an item it is not about for longer than one step.
type notice struct {
	text  string
	style lipgloss.Style
	item  int64 // the item it is about or shown on; 0: none
	kind  noticeKind
}

// say puts text on the line, about item (0: none).
func (n *notice) say(style lipgloss.Style, text string, item int64) {
	*n = notice{text: text, style: style, item: item, kind: noticePlain}
}

// confirm makes the text a confirmation: of the item on screen (onScreen), for the next
// item shown (next), or, about an item left already, of the item now on screen (item).
func (n *notice) confirm(onScreen, next bool, item int64) {
	n.kind = noticeConfirm
	switch {
	case onScreen:
		n.item = item
	case next:
		n.item, n.kind = 0, noticeForNext
	}
}

// shown follows the item now on screen: a confirmation kept for it is tied to it, a
// message about another item goes.
func (n *notice) shown(item int64) {
	switch {
	case n.kind == noticeForNext:
		n.item, n.kind = item, noticeConfirm
	case n.item != 0 && n.item != item:
		n.clear()
	}
}

// dropConfirmation clears a confirmation already beside its item: the annotator moved on.
func (n *notice) dropConfirmation() {
	if n.kind == noticeConfirm {
		n.clear()
	}
}

func (n *notice) clear() { *n = notice{} }

// view is the line, cut to width.
func (n *notice) view(width int) string {
	return ansi.Truncate(n.style.Render(n.text), width, "…")
}
