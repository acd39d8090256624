package tui

import "github.com/charmbracelet/bubbles/key"

// keyMap is every binding of the annotate screen, shown by bubbles/help.
type keyMap struct {
	Score, Choice                       key.Binding
	NextField, PrevField                key.Binding
	Comment, Submit                     key.Binding
	PrevItem, NextItem                  key.Binding
	Undo, Flag, Skip, Open              key.Binding
	ScrollUp, ScrollDown                key.Binding
	Help, Quit                          key.Binding
	LeaveEditor, ConfirmFlag, ForceQuit key.Binding
}

func defaultKeyMap() keyMap {
	return keyMap{
		Score:       key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-5", "score")),
		Choice:      key.NewBinding(key.WithKeys("y", "n", "a"), key.WithHelp("y/n/a", "yes/no/NA")),
		NextField:   key.NewBinding(key.WithKeys("tab", "down", "j"), key.WithHelp("tab/↓", "next field")),
		PrevField:   key.NewBinding(key.WithKeys("shift+tab", "up", "k"), key.WithHelp("S-tab/↑", "prev field")),
		Comment:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "comment")),
		Submit:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "submit")),
		PrevItem:    key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "prev item")),
		NextItem:    key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next item")),
		Undo:        key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "undo")),
		Flag:        key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "flag")),
		Skip:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "skip")),
		Open:        key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open images")),
		ScrollUp:    key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "scroll up")),
		ScrollDown:  key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "scroll down")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		LeaveEditor: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "done editing")),
		ConfirmFlag: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "flag")),
		ForceQuit:   key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// ShortHelp implements help.KeyMap.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Score, k.Choice, k.NextField, k.Submit, k.PrevItem, k.NextItem, k.Comment, k.Undo, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Score, k.Choice, k.NextField, k.PrevField},
		{k.Submit, k.PrevItem, k.NextItem, k.Skip},
		{k.Comment, k.Undo, k.Flag, k.Open},
		{k.ScrollUp, k.ScrollDown, k.Help, k.Quit},
	}
}
