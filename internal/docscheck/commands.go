package docscheck

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"mvdan.cc/sh/v3/syntax"
)

// Command is one call of a program in a ```sh block of a Markdown file.
type Command struct {
	File string   // the Markdown file
	Line int      // 1-based line of the call in the file
	Args []string // the words after the program's name; Unknown stands for a word the shell computes
	Text string   // the call as written
}

func (c Command) String() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text) }

// Unknown stands for a word whose value only the shell knows ($PWD/x, $(date), *.jsonl).
const Unknown = "\x00unknown"

// Commands returns every call of program in the ```sh (or ```bash, ```shell) blocks of the
// Markdown files: in pipelines, after && and ;, in the background, inside $( ) and <( ).
// The blocks are parsed as the shell parses them (mvdan.cc/sh), so quotes, line
// continuations and comments are the shell's. A block that is not valid shell is an error.
func Commands(files []string, program string) ([]Command, error) {
	var out []Command
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		root := md.Parser().Parse(text.NewReader(src))
		err = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			fb, ok := n.(*ast.FencedCodeBlock)
			if !entering || !ok {
				return ast.WalkContinue, nil
			}
			switch string(fb.Language(src)) {
			case "sh", "bash", "shell":
			default:
				return ast.WalkContinue, nil
			}
			var code bytes.Buffer
			first := 0
			for i := 0; i < fb.Lines().Len(); i++ {
				seg := fb.Lines().At(i)
				if i == 0 {
					first = bytes.Count(src[:seg.Start], []byte("\n")) + 1
				}
				code.Write(seg.Value(src))
			}
			calls, err := callsIn(code.String(), program)
			if err != nil {
				return ast.WalkStop, fmt.Errorf("%s:%d: the ```sh block is not valid shell: %w", path, first, err)
			}
			for _, c := range calls {
				c.File, c.Line = path, first+c.Line-1
				out = append(out, c)
			}
			return ast.WalkContinue, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// callsIn parses a shell script and returns its calls of program (lines relative to it).
func callsIn(script, program string) ([]Command, error) {
	f, err := syntax.NewParser(syntax.KeepComments(false)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, err
	}
	var out []Command
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 || call.Args[0].Lit() != program {
			return true
		}
		c := Command{Line: int(call.Pos().Line())}
		for _, w := range call.Args[1:] {
			c.Args = append(c.Args, wordValue(w))
		}
		c.Text = strings.TrimSpace(script[call.Pos().Offset():call.End().Offset()])
		out = append(out, c)
		return true
	})
	return out, nil
}

// wordValue is a word's value when the text alone gives it (quotes removed), else Unknown.
func wordValue(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return Unknown
				}
				b.WriteString(lit.Value)
			}
		default:
			return Unknown
		}
	}
	s := b.String()
	if strings.ContainsAny(s, "*?[") && !strings.Contains(s, "=") {
		return Unknown // a glob
	}
	return s
}
