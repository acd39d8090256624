package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/testkit"
)

// TestJudgePrintPromptIsWhatIsSent (issue #37): m3eval judge --print-prompt with the model
// judge's flags prints the request bodies, one a line, and sends nothing; the run with the
// same flags sends those bodies byte for byte. Without --endpoint it prints the template.
func TestJudgePrintPromptIsWhatIsSent(t *testing.T) {
	_, db := modelJudgeFixture(t)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	args := []string{"--db", db, "judge", "--name", "pp", "--endpoint", vlm.Endpoint(), "--model", "judge-careful", "--concurrency", "1", "--temperature", "0"}
	printed := mustRun(t, append(slices.Clone(args), "--print-prompt")...)
	if vlm.Requests() != 0 {
		t.Fatalf("--print-prompt sent %d requests", vlm.Requests())
	}
	mustRun(t, args...)
	sent := vlm.Bodies()
	lines := strings.Split(strings.TrimSuffix(printed, "\n"), "\n")
	if len(lines) != 3 || len(sent) != 3 {
		t.Fatalf("printed %d bodies, sent %d", len(lines), len(sent))
	}
	for i := range sent {
		if !bytes.Equal([]byte(lines[i]), sent[i]) {
			t.Errorf("body %d: printed and sent differ:\nprinted %.300s\nsent    %.300s", i, lines[i], sent[i])
		}
	}
	if tmpl := mustRun(t, "judge", "--print-prompt"); !strings.Contains(tmpl, `{{define "user" -}}`) {
		t.Errorf("--print-prompt without --endpoint: %.200s", tmpl)
	}
}
