// Package docscheck checks m3eval's documentation: every relative link of a Markdown file
// must point at a file or directory that exists and, when it names a heading (#anchor) of a
// Markdown file, at a heading that exists. Its test runs the check on README.md and docs/*.md
// as part of `make test`. Commands lists the calls of a program in the ```sh blocks, which
// cmd/m3eval's TestDocumentedCommandsParse parses with the current commands and flags.
package docscheck

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Link is one link or image of a Markdown file.
type Link struct {
	File   string // the Markdown file it is in
	Line   int    // 1-based line of the link
	Target string // the destination as written
}

// Problem is a link that does not resolve.
type Problem struct {
	Link
	Why string
}

func (p Problem) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Target, p.Why)
}

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// document is a parsed Markdown file: its links and the anchors of its headings.
type document struct {
	links   []Link
	anchors map[string]bool
}

func parse(path string) (*document, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	root := md.Parser().Parse(text.NewReader(src))
	doc := &document{anchors: map[string]bool{}}
	seen := map[string]int{}
	err = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			slug := Slug(plainText(n, src))
			// GitHub numbers repeated headings: a, a-1, a-2.
			if k := seen[slug]; k > 0 {
				doc.anchors[slug+"-"+strconv.Itoa(k)] = true
			} else {
				doc.anchors[slug] = true
			}
			seen[slug]++
		case *ast.Link:
			doc.links = append(doc.links, Link{path, lineOf(n, src), string(n.Destination)})
		case *ast.Image:
			doc.links = append(doc.links, Link{path, lineOf(n, src), string(n.Destination)})
		}
		return ast.WalkContinue, nil
	})
	return doc, err
}

// plainText is a heading's text as GitHub renders it: code spans and emphasis keep their text.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(src))
			case *ast.String:
				b.Write(c.Value)
			}
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// lineOf is the line of the first text inside an inline node (links carry no position of
// their own in goldmark), or of the block around it.
func lineOf(n ast.Node, src []byte) int {
	off := -1
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering && off < 0 {
			off = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	for p := n.Parent(); off < 0 && p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			off = p.Lines().At(0).Start
		}
	}
	if off < 0 {
		return 0
	}
	return bytes.Count(src[:off], []byte("\n")) + 1
}

// Slug is the anchor GitHub gives a heading: lower case, spaces become hyphens, and every
// character other than a letter, a digit, '-' or '_' is dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Check returns every link of the Markdown files that does not resolve. Links with a scheme
// (https:, mailto:) are not followed.
func Check(files []string) ([]Problem, error) {
	docs := map[string]*document{}
	load := func(path string) (*document, error) {
		if d, ok := docs[path]; ok {
			return d, nil
		}
		d, err := parse(path)
		if err != nil {
			return nil, err
		}
		docs[path] = d
		return d, nil
	}
	var out []Problem
	for _, f := range files {
		d, err := load(f)
		if err != nil {
			return nil, err
		}
		for _, l := range d.links {
			u, err := url.Parse(l.Target)
			if err != nil {
				out = append(out, Problem{l, "not a valid link: " + err.Error()})
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue
			}
			target := f
			if u.Path != "" {
				target = filepath.Join(filepath.Dir(f), filepath.FromSlash(u.Path))
				if _, err := os.Stat(target); err != nil {
					out = append(out, Problem{l, "no such file or directory"})
					continue
				}
			}
			if u.Fragment == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				out = append(out, Problem{l, "an anchor into a file that is not Markdown"})
				continue
			}
			td, err := load(target)
			if err != nil {
				return nil, err
			}
			if !td.anchors[u.Fragment] {
				out = append(out, Problem{l, fmt.Sprintf("no heading with the anchor #%s in %s", u.Fragment, target)})
			}
		}
	}
	return out, nil
}
