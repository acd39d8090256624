package lmmslog

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDocIDAndResponse(t *testing.T) {
	cases := []struct {
		sample, resp, err string
		id                int64
	}{
		{`{"doc_id": 3, "filtered_resps": "a"}`, "a", "", 3},                     // current: flattened
		{`{"doc_id": 0, "filtered_resps": ["b"], "resps": [["x"]]}`, "b", "", 0}, // filtered wins
		{`{"doc_id": 1, "filtered_resps": null, "resps": [["c"]]}`, "c", "", 1},  // oldest: resps only
		{`{"doc_id": 2, "filtered_resps": [[]]}`, "", "", 2},                     // nothing generated
		{`{"doc_id": 2, "filtered_resps": [3]}`, "", "filtered_resps: no string", 2},
		{`{"doc_id": 2}`, "", "filtered_resps: missing", 2},
		{`{"doc_id": -1, "filtered_resps": "a"}`, "", "doc_id: not a non-negative integer", 0},
		{`{"doc_id": "x", "filtered_resps": "a"}`, "", "doc_id: not a number", 0},
		{`{"filtered_resps": "a"}`, "", "doc_id: missing", 0},
	}
	for _, c := range cases {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.sample), &m); err != nil {
			t.Fatal(err)
		}
		id, err := DocID(m)
		var resp string
		if err == nil {
			resp, err = Response(m)
		}
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.sample, err, c.err)
			}
		case err != nil || id != c.id || resp != c.resp:
			t.Errorf("%s: %d %q %v", c.sample, id, resp, err)
		}
	}
}
