package tui

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
)

// TestNoticeFollowsTheItem: a message goes with the item it is about; a confirmation of the
// item left stays for the next item shown and goes with that one; opening the reader drops
// a confirmation but not a plain message.
func TestNoticeFollowsTheItem(t *testing.T) {
	st := lipgloss.NewStyle()
	cases := []struct {
		name  string
		steps func(n *notice)
		want  string
	}{
		{"about the item left", func(n *notice) { n.say(st, "missing: Overall", 1); n.shown(2) }, ""},
		{"about the item shown again", func(n *notice) { n.say(st, "missing: Overall", 1); n.shown(1) }, "missing: Overall"},
		{"about no item", func(n *notice) { n.say(st, "could not read the queue", 0); n.shown(2) }, "could not read the queue"},
		{"confirmation for the next item", func(n *notice) {
			n.say(st, "submitted", 1)
			n.confirm(false, true, 1)
			n.shown(2)
		}, "submitted"},
		{"confirmation gone one item later", func(n *notice) {
			n.say(st, "submitted", 1)
			n.confirm(false, true, 1)
			n.shown(2)
			n.shown(3)
		}, ""},
		{"confirmation dropped by the reader", func(n *notice) {
			n.say(st, "submitted", 1)
			n.confirm(false, true, 1)
			n.shown(2)
			n.dropConfirmation()
		}, ""},
		{"a confirmation not yet beside its item stays", func(n *notice) {
			n.say(st, "submitted", 1)
			n.confirm(false, true, 1)
			n.dropConfirmation()
			n.shown(2)
		}, "submitted"},
		{"flagged on screen, dropped by the reader", func(n *notice) {
			n.say(st, "flagged for review", 1)
			n.confirm(true, true, 1)
			n.dropConfirmation()
		}, ""},
		{"a plain message stays when the reader opens", func(n *notice) { n.say(st, "this turn has no images", 1); n.dropConfirmation() }, "this turn has no images"},
	}
	for _, tc := range cases {
		var n notice
		tc.steps(&n)
		if got := n.view(80); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
