package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/m3bench/m3eval/internal/rubric"
)

// rootKeyMap holds the keys that work on every screen; the root model owns them.
type rootKeyMap struct {
	Help, Quit key.Binding
}

func defaultRootKeyMap() rootKeyMap {
	return rootKeyMap{
		Help: key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit: key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// keyMap is every binding of the annotate screen; its key tables (annotate_keys.go) say
// what each does and when, and draw the footer and the help screen from them.
type keyMap struct {
	Score, Choice                       key.Binding
	NextField, PrevField                key.Binding
	Comment, Submit, Edit               key.Binding
	PrevItem, NextItem                  key.Binding
	Undo, Flag, Skip, Open              key.Binding
	ScrollUp, ScrollDown, Page          key.Binding
	Top, Bottom, Read, Image            key.Binding
	Quit                                key.Binding
	LeaveEditor, ConfirmFlag, ForceQuit key.Binding
	CancelFlag, SaveSubmit              key.Binding
}

// newKeyMap builds the annotate keys from the rubric: the score keys are the digits of its
// scales' ranges, the choice keys those its choices declare, so a rubric with a 0–3 scale or
// other choice letters needs no code change.
func newKeyMap(r *rubric.Rubric) keyMap {
	lo, hi := 10, -1
	var choiceKeys, choiceHelp []string
	seen := map[string]bool{}
	for _, f := range r.Fields {
		switch f.Kind {
		case rubric.KindScale:
			lo, hi = min(lo, max(0, f.Min)), max(hi, min(9, f.Max))
		case rubric.KindChoice:
			for _, c := range f.Choices {
				if c.Key != "" && !seen[c.Key] {
					seen[c.Key] = true
					choiceKeys = append(choiceKeys, c.Key)
					choiceHelp = append(choiceHelp, c.Value)
				}
			}
		}
	}
	// Caps Lock and a Chinese input method's full-width letters (ｙ ｎ ａ) count as the
	// choice keys, as full-width digits count as digits; the help shows the plain keys.
	var choiceAlt []string
	for _, k := range choiceKeys {
		for _, alt := range []string{strings.ToUpper(k), fullWidth(k), fullWidth(strings.ToUpper(k))} {
			if alt != k && !seen[alt] {
				seen[alt] = true
				choiceAlt = append(choiceAlt, alt)
			}
		}
	}
	var scoreKeys []string
	for d := lo; d <= hi; d++ {
		// A Chinese input method sends full-width digits; they count as the digits.
		scoreKeys = append(scoreKeys, strconv.Itoa(d), string(rune('０'+d)))
	}
	scoreHelp := ""
	if hi >= lo {
		scoreHelp = fmt.Sprintf("%d-%d", lo, hi)
	}
	km := keyMap{
		Score:       key.NewBinding(key.WithKeys(scoreKeys...), key.WithHelp(scoreHelp, "score")),
		Choice:      key.NewBinding(key.WithKeys(append(append([]string{}, choiceKeys...), choiceAlt...)...), key.WithHelp(strings.Join(choiceKeys, "/"), strings.ToLower(strings.Join(choiceHelp, "/")))),
		NextField:   key.NewBinding(key.WithKeys("tab", "down", "j"), key.WithHelp("tab/↓", "next field")),
		PrevField:   key.NewBinding(key.WithKeys("shift+tab", "up", "k"), key.WithHelp("S-tab/↑", "prev field")),
		Comment:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "comment")),
		Submit:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "submit")),
		Edit:        key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit submitted")),
		PrevItem:    key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "prev item")),
		NextItem:    key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next item")),
		Undo:        key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "undo")),
		Flag:        key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "flag")),
		Skip:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "skip")),
		Open:        key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open images")),
		ScrollUp:    key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "scroll up")),
		ScrollDown:  key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "scroll down")),
		Page:        key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "page down")),
		Top:         key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "top")),
		Bottom:      key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "bottom")),
		Read:        key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "read")),
		Image:       key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "image full screen")),
		Quit:        key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		LeaveEditor: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "done editing")),
		// In the comment box enter is a new line: ctrl+s saves the comment and submits in
		// one key (raw mode turns off XON/XOFF, so the terminal passes it through).
		SaveSubmit:  key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "save & submit")),
		ConfirmFlag: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "flag")),
		CancelFlag:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel (f brings the reason back)")),
		ForceQuit:   key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
	// A rubric of its own may have no scale or no choice field: its help line then shows
	// no empty entry for them (#39).
	km.Score.SetEnabled(len(scoreKeys) > 0)
	km.Choice.SetEnabled(len(choiceKeys) > 0)
	return km
}

// fullWidth is the full-width form (U+FF01–U+FF5E) of a printable ASCII key, as a Chinese
// input method sends it; other keys stay as they are.
func fullWidth(k string) string {
	if r := []rune(k); len(r) == 1 && r[0] > ' ' && r[0] <= '~' {
		return string(r[0] - '!' + '！')
	}
	return k
}

// plainKey maps a key to the plain ASCII key it stands for: a full-width form to its ASCII
// one and a letter to lower case (Caps Lock), so "Ｙ", "ｙ" and "Y" all answer as "y".
func plainKey(k string) string {
	if r := []rune(k); len(r) == 1 && r[0] >= '！' && r[0] <= '～' {
		k = string(r[0] - '！' + '!')
	}
	return strings.ToLower(k)
}
