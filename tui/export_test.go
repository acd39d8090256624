package tui

// RubricPane exposes the cached rubric pane to the tests.
func (m *Model) RubricPane() string { return m.annotate.rubricPane() }
