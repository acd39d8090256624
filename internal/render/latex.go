package render

import (
	"strings"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// latexEscaper makes text safe inside a LaTeX tabular: the ten special characters escaped;
// |, < and > spelled as text commands (in OT1, pdflatex's default font encoding, they would
// print as a dash and inverted marks); the Greek letters and signs of our statistic names in
// math mode, so that the table compiles with pdflatex as well as with XeLaTeX.
var latexEscaper = strings.NewReplacer(
	`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`,
	"{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	"|", `\textbar{}`, "<", `\textless{}`, ">", `\textgreater{}`,
	"α", `$\alpha$`, "κ", `$\kappa$`, "ρ", `$\rho$`, "τ", `$\tau$`, "−", `$-$`, "–", "--",
	"—", "---", "×", `$\times$`, "≤", `$\le$`, "·", `$\cdot$`,
)

// EscapeLaTeX makes text from data safe for a LaTeX table: control and escape sequences
// neutralized, then LaTeX's special characters escaped.
func EscapeLaTeX(s string) string { return latexEscaper.Replace(textsafe.Line(s)) }
