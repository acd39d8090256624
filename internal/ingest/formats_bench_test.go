package ingest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadOpenAI measures the reading side alone (no database): 10,000 OpenAI-format
// conversations of 10 turns against the same turns as m3eval records.
func BenchmarkReadOpenAI(b *testing.B) {
	dir := b.TempDir()
	openai, native := filepath.Join(dir, "chats.jsonl"), filepath.Join(dir, "turns.jsonl")
	fo, _ := os.Create(openai)
	fn, _ := os.Create(native)
	wo, wn := bufio.NewWriter(fo), bufio.NewWriter(fn)
	for c := 0; c < 10000; c++ {
		id := fmt.Sprintf("conv%07d", c)
		fmt.Fprintf(wo, `{"id":%q,"model":"m","messages":[{"role":"system","content":"Be careful."}`, id)
		for t := 1; t <= 10; t++ {
			u := fmt.Sprintf("Why is the person in image %d holding an umbrella? Look at the ground, turn %d.", c%3, t)
			r := fmt.Sprintf("The person is holding an umbrella because it is raining: the ground is wet, turn %d.", t)
			fmt.Fprintf(wo, `,{"role":"user","content":%q},{"role":"assistant","content":%q}`, u, r)
			fmt.Fprintf(wn, `{"sample_id":"%s_turn_%d","episode_id":%q,"turn":%d,"action_type":"unknown","task_type":"","user_message":%q,"vlm_response":%q,"expected_answer":"","images":[],"model":"m","meta":{"source":{"format":"openai","id":%q,"system":"Be careful."}}}`+"\n", id, t, id, t, u, r, id)
		}
		wo.WriteString("]}\n")
	}
	wo.Flush()
	wn.Flush()
	fo.Close()
	fn.Close()
	for _, f := range []Format{FormatM3eval, FormatOpenAI} {
		path := native
		if f == FormatOpenAI {
			path = openai
		}
		b.Run(string(f), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				src, c, err := Open(path, Options{Format: f})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					rec, err := src.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rec.Turn.Sum = rec.Turn.Hash() // as Import does
					n++
				}
				c.Close()
				if n != 100000 {
					b.Fatalf("%d turns", n)
				}
			}
		})
	}
}
