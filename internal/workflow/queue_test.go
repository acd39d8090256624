package workflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/usage"
	"github.com/m3bench/m3eval/internal/workflow"
)

func TestParseFilter(t *testing.T) {
	f, err := workflow.ParseFilter([]string{"action_type=mislead", "action_type=mislead_subtle"})
	if err != nil || strings.Join(f["action_type"], ",") != "mislead,mislead_subtle" || len(f) != 1 {
		t.Fatalf("got %v, %v", f, err)
	}
	for spec, want := range map[string]string{
		"action_type":  `--filter "action_type": want KEY=VALUE`,
		"=x":           `--filter "=x": want KEY=VALUE`,
		"colour=green": `--filter "colour=green": cannot filter on colour (use ` + strings.Join(store.FilterKeys(), ", ") + ")",
	} {
		if _, err := workflow.ParseFilter([]string{spec}); err == nil || !errors.Is(err, usage.Err) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v; want a usage error %q", spec, err, want)
		}
	}
	if d := workflow.DescribeFilter([]string{"a=1", "b=2"}); d != " --filter a=1 --filter b=2" {
		t.Fatalf("DescribeFilter: %q", d)
	}
}

func TestAnnotatorQueue(t *testing.T) {
	ctx := context.Background()
	s := storetest.Demo(t, "")
	q, err := workflow.AnnotatorQueue(ctx, s, "alice", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := q.Len(ctx); err != nil || n != 35 {
		t.Fatalf("alice's queue holds %d turns: %v", n, err)
	}
	_, err = workflow.AnnotatorQueue(ctx, s, "alice", "", store.Filter{"action_type": {"no_such_action"}}, " --filter action_type=no_such_action")
	if err == nil || err.Error() != "the queue is empty: nothing imported in "+s.Path()+" matches --filter action_type=no_such_action" {
		t.Fatalf("empty queue: %v", err)
	}
}
