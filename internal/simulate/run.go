package simulate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/m3bench/m3eval/internal/outfile"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/vlm"
)

// Strategy names a test an episode runs.
type Strategy string

// The strategies.
const (
	StrategyRules      Strategy = "rules"
	StrategyCrossImage Strategy = "cross-image"
)

// ParseStrategies reads --strategy: rules, cross-image or both.
func ParseStrategies(s string) ([]Strategy, error) {
	switch s {
	case "rules":
		return []Strategy{StrategyRules}, nil
	case "cross-image":
		return []Strategy{StrategyCrossImage}, nil
	case "both":
		return []Strategy{StrategyRules, StrategyCrossImage}, nil
	}
	return nil, fmt.Errorf("strategy %q: want rules, cross-image or both", s)
}

// Chatter sends a conversation to a VLM and returns its answer (*vlm.Client is one).
type Chatter interface {
	Chat(ctx context.Context, tag vlm.Tag, msgs []vlm.Message) (string, error)
}

// Options configures a run.
type Options struct {
	Scenes      []Scene
	Strategies  []Strategy
	Turns       int // rule-strategy episode length
	Difficulty  int // cross-image test, 1-4
	Seed        uint64
	Model       string
	Concurrency int
	Chat        Chatter
	// Out is the turns file; "" or "-" writes to Stdout (no resume).
	Out    string
	Stdout io.Writer
	Resume bool
	// Progress is told the turns done of the turns planned (internal/progress draws them,
	// on a terminal and without --quiet); nil: nothing.
	Progress progress.Func
	// ScenesDigest identifies the scenes input, so --resume refuses another one.
	ScenesDigest string
	// Sampling is the system prompt sent first in every conversation and the sampling
	// parameters the Chatter sends (recorded here: meta.sampling, the journal header).
	Sampling Sampling
}

// episode is one scene under one strategy.
type episode struct {
	id       string
	scene    *Scene
	strategy Strategy
}

// Skipped is a scene a strategy cannot run on, and why.
type Skipped struct {
	Scene    string
	Strategy Strategy
	Reason   string
}

// EpisodeError is an episode that failed; nothing of it was written.
type EpisodeError struct {
	Episode string
	Turn    int
	Err     error
}

// Error implements error.
func (e *EpisodeError) Error() string {
	return fmt.Sprintf("%s: turn %d: %v", e.Episode, e.Turn, e.Err)
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *EpisodeError) Unwrap() error { return e.Err }

// Summary says what a run did.
type Summary struct {
	Episodes int // planned
	Resumed  int // finished by an earlier run and kept
	Done     int // finished by this run
	Turns    int // written by this run
	// Truncated counts the turns written whose answer was cut at the token limit
	// (meta.truncated: true).
	Truncated int
	Failed    []*EpisodeError
	Skipped   []Skipped
	Elapsed   time.Duration
}

// ErrEpisodesFailed is returned when some episodes failed (the others were written).
var ErrEpisodesFailed = errors.New("some episodes failed")

// plan lists the episodes of the scenes under the strategies.
func plan(opts *Options) ([]episode, []Skipped) {
	var eps []episode
	var skipped []Skipped
	for i := range opts.Scenes {
		sc := &opts.Scenes[i]
		for _, st := range opts.Strategies {
			switch st {
			case StrategyRules:
				if sc.Task == nil {
					skipped = append(skipped, Skipped{sc.ID, st, "the scene has no task"})
					continue
				}
				eps = append(eps, episode{episodeID(sc.ID, "rules", opts.Model), sc, st})
			case StrategyCrossImage:
				if _, err := newCrossImage(sc, opts.Difficulty, rand.New(rand.NewPCG(0, 0))); err != nil {
					skipped = append(skipped, Skipped{sc.ID, st, err.Error()})
					continue
				}
				eps = append(eps, episode{episodeID(sc.ID, "cross", opts.Model), sc, st})
			}
		}
	}
	return eps, skipped
}

// episodeID is <scene>_<rules|cross>_<model>: runs of one scene set against several models
// import into one database side by side.
func episodeID(scene, strategy, model string) string {
	id := scene + "_" + strategy
	if model == "" {
		return id
	}
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, model)
	return id + "_" + slug
}

// newPlanner starts an episode's strategy with its own generator, seeded from the run's seed,
// the scene and the strategy (not the model), so an episode draws the same turns whatever
// runs beside it, and two models meet the same templates where their answers agree.
func (opts *Options) newPlanner(ep episode) planner {
	h := fnv.New64a()
	h.Write([]byte(ep.scene.ID + "\x00" + string(ep.strategy)))
	rng := rand.New(rand.NewPCG(opts.Seed, h.Sum64()))
	if ep.strategy == StrategyCrossImage {
		p, _ := newCrossImage(ep.scene, opts.Difficulty, rng)
		return p
	}
	return newRules(ep.scene, opts.Turns, rng)
}

// TurnRecord is a simulated turn as `m3eval import` reads it.
type TurnRecord struct {
	SampleID       string   `json:"sample_id"`
	EpisodeID      string   `json:"episode_id"`
	Turn           int      `json:"turn"`
	ActionType     Action   `json:"action_type"`
	TaskType       string   `json:"task_type"`
	UserMessage    string   `json:"user_message"`
	VLMResponse    string   `json:"vlm_response"`
	ExpectedAnswer string   `json:"expected_answer"`
	Images         []string `json:"images"`
	Model          string   `json:"model"`
	Meta           Meta     `json:"meta"`
}

func taskType(ep episode) string {
	if ep.strategy == StrategyCrossImage {
		return "cross_image_memory"
	}
	if ep.scene.Task.Type != "" {
		return ep.scene.Task.Type
	}
	return "reasoning"
}

// Run runs the episodes, concurrently, and writes each finished episode's turns whole.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	start := time.Now()
	eps, skipped := plan(&opts)
	sum := &Summary{Episodes: len(eps), Skipped: skipped}
	if len(eps) == 0 {
		return sum, errors.New("no episodes to run: " + skippedText(skipped))
	}
	out, err := openOutput(&opts)
	if err != nil {
		// Nothing ran: no summary of zero episodes to stand beside the reason.
		return nil, err
	}
	defer out.close()
	var todo []episode
	for _, ep := range eps {
		if out.done[ep.id] {
			sum.Resumed++
			continue
		}
		todo = append(todo, ep)
	}

	prog := turnCount{report: opts.Progress}
	for _, ep := range todo {
		prog.planned += int64(opts.newPlanner(ep).planned())
	}
	prog.report.Report(0, prog.planned)

	jobs := make(chan episode)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var writeErr error
	for range max(1, opts.Concurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for ep := range jobs {
				buf.Reset()
				n, cut, err := opts.runEpisode(ctx, ep, &buf, &prog)
				if ctx.Err() != nil {
					continue // interrupted: the episode restarts on --resume
				}
				mu.Lock()
				if err != nil {
					var ee *EpisodeError
					if !errors.As(err, &ee) {
						ee = &EpisodeError{Episode: ep.id, Err: err}
					}
					sum.Failed = append(sum.Failed, ee)
				} else if werr := out.commit(ep.id, n, buf.Bytes()); werr != nil {
					if writeErr == nil {
						writeErr = werr
					}
				} else {
					sum.Done++
					sum.Turns += n
					sum.Truncated += cut
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, ep := range todo {
		mu.Lock()
		stop := writeErr != nil
		mu.Unlock()
		if stop {
			break
		}
		select {
		case jobs <- ep:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	sum.Elapsed = time.Since(start)
	switch {
	case writeErr != nil:
		return sum, writeErr
	case ctx.Err() != nil:
		return sum, ctx.Err()
	case len(sum.Failed) > 0:
		return sum, ErrEpisodesFailed
	}
	return sum, nil
}

// runEpisode plays one episode against the VLM and encodes its turn records into buf; cut
// counts its turns whose answer was cut at the token limit, kept and marked
// meta.truncated: true, never as complete ones.
func (opts *Options) runEpisode(ctx context.Context, ep episode, buf *bytes.Buffer, prog *turnCount) (n, cut int, err error) {
	p := opts.newPlanner(ep)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	msgs := make([]vlm.Message, 0, 2*p.planned()+1)
	if opts.Sampling.System != "" {
		msgs = append(msgs, vlm.Message{Role: vlm.RoleSystem, Text: opts.Sampling.System})
	}
	sampling := opts.Sampling.forMeta()
	answer := ""
	rec := TurnRecord{EpisodeID: ep.id, TaskType: taskType(ep), Images: ep.scene.Images, Model: opts.Model}
	for {
		s, ok := p.next(answer)
		if !ok {
			return n, cut, nil
		}
		n++
		m := vlm.Message{Role: vlm.RoleUser, Text: s.Text}
		if n == 1 {
			m.Images = ep.scene.Images
		}
		msgs = append(msgs, m)
		a, err := opts.Chat.Chat(ctx, vlm.Tag{Episode: ep.id, Turn: n}, msgs)
		truncated := vlm.IsTruncated(err)
		if err != nil && !truncated {
			return n, cut, &EpisodeError{Episode: ep.id, Turn: n, Err: err}
		}
		answer = a
		msgs = append(msgs, vlm.Message{Role: vlm.RoleAssistant, Text: a})
		rec.SampleID = ep.id + "_turn_" + strconv.Itoa(n)
		rec.Turn, rec.ActionType, rec.UserMessage, rec.VLMResponse, rec.ExpectedAnswer, rec.Meta = n, s.Action, s.Text, a, s.Expected, s.Meta
		rec.Meta.Sampling = sampling
		rec.Meta.Truncated = truncated
		if truncated {
			cut++
		}
		rec.TaskType = taskType(ep)
		if s.TaskType != "" {
			rec.TaskType = s.TaskType
		}
		if err := enc.Encode(&rec); err != nil {
			return n, cut, err
		}
		prog.add()
	}
}

func skippedText(s []Skipped) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprintf("%s (%s): %s", x.Scene, x.Strategy, x.Reason))
	}
	if len(parts) == 0 {
		return "no scenes"
	}
	return strings.Join(parts, "; ")
}

// journalHeader is the first line of the journal: the settings a resumed run must share.
type journalHeader struct {
	Format     string   `json:"m3eval_simulate"`
	Model      string   `json:"model"`
	Strategies []string `json:"strategies"`
	Turns      int      `json:"turns"`
	Difficulty int      `json:"difficulty"`
	Seed       uint64   `json:"seed"`
	Scenes     string   `json:"scenes"`
	// Sampling: the system prompt (its text) and sampling parameters of the run.
	Sampling *Sampling `json:"sampling,omitempty"`
}

// journalEntry records a finished episode: its turns end at byte End of the turns file.
type journalEntry struct {
	Episode string `json:"episode"`
	Turns   int    `json:"turns"`
	End     int64  `json:"end"`
}

// output is where finished episodes go. A file run keeps a journal beside the turns file
// (<out>.journal): each finished episode is appended to the turns file in one write, then
// recorded in the journal with the offset where it ends. A resumed run keeps the journaled
// episodes, cuts the turns file back to the last journaled end (dropping any episode whose
// write was not journaled), and runs the rest; no turn is ever written twice.
type output struct {
	w       io.Writer
	f       *os.File
	journal *os.File
	end     int64
	done    map[string]bool
}

// outputExists says whether the turns file out (or its journal) is there, and refuses it
// unless resume is set: a new run never appends to an earlier one.
func outputExists(out string, resume bool) (bool, error) {
	if out == "" || out == "-" {
		return false, nil
	}
	// A missing directory is said in the words of every -o, naming --out: the first file
	// opened there is the request log, whose name the user never gave. It is not created:
	// a typo in --out should not leave directories behind.
	if dir := filepath.Dir(out); dir != "" {
		if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("--out %s: the directory %s does not exist: create it first, or choose another --out", out, dir)
		} else if err == nil && !fi.IsDir() {
			return false, fmt.Errorf("--out %s: %s is not a directory", out, dir)
		}
	}
	_, outErr := os.Stat(out)
	_, jErr := os.Stat(JournalPath(out))
	exists := outErr == nil || jErr == nil
	if exists && !resume {
		return true, fmt.Errorf("%s exists: pass --resume to continue that run, or choose another --out", out)
	}
	return exists, nil
}

// JournalPath is the journal of a turns file.
func JournalPath(out string) string { return out + ".journal" }

func openOutput(opts *Options) (*output, error) {
	o := &output{done: map[string]bool{}}
	if opts.Out == "" || opts.Out == "-" {
		if opts.Resume {
			return nil, errors.New("--resume needs --out FILE")
		}
		o.w = opts.Stdout
		return o, nil
	}
	hdr := journalHeader{Format: "1", Model: opts.Model, Turns: opts.Turns, Difficulty: opts.Difficulty, Seed: opts.Seed, Scenes: opts.ScenesDigest}
	if !opts.Sampling.IsZero() {
		sm := opts.Sampling
		hdr.Sampling = &sm
	}
	for _, s := range opts.Strategies {
		hdr.Strategies = append(hdr.Strategies, string(s))
	}
	jpath := JournalPath(opts.Out)
	_, jErr := os.Stat(jpath)
	exists, err := outputExists(opts.Out, opts.Resume)
	if err != nil {
		return nil, err
	}
	if exists && jErr != nil {
		return nil, fmt.Errorf("%s has no journal (%s): it was not written by m3eval simulate, so it cannot be resumed", opts.Out, jpath)
	}
	var entries []journalEntry
	if exists {
		var err error
		entries, err = readJournal(jpath, hdr)
		if err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(opts.Out, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	// Keep the journaled episodes that the file holds, in order.
	var kept []journalEntry
	for _, e := range entries {
		if e.End > st.Size() || (len(kept) > 0 && e.End <= kept[len(kept)-1].End) {
			break
		}
		kept = append(kept, e)
	}
	if len(kept) > 0 {
		o.end = kept[len(kept)-1].End
	}
	if err := f.Truncate(o.end); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(o.end, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	// Rewrite the journal with what was kept (whole, then renamed over the old one).
	var jb bytes.Buffer
	hb, _ := json.Marshal(hdr)
	jb.Write(hb)
	jb.WriteByte('\n')
	for _, e := range kept {
		b, _ := json.Marshal(e)
		jb.Write(b)
		jb.WriteByte('\n')
		o.done[e.Episode] = true
	}
	if err := outfile.WriteFile(jpath, jb.Bytes(), 0o644); err != nil {
		f.Close()
		return nil, err
	}
	j, err := os.OpenFile(jpath, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		f.Close()
		return nil, err
	}
	o.f, o.journal, o.w = f, j, f
	return o, nil
}

func readJournal(path string, want journalHeader) ([]journalEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	var entries []journalEntry
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			var h journalHeader
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Format == "" {
				return nil, fmt.Errorf("%s:1: not a simulate journal", path)
			}
			if d := headerDiff(h, want); d != "" {
				return nil, fmt.Errorf("resume: the run in %s used %s; run with the same settings, or choose another --out", path, d)
			}
			continue
		}
		var e journalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			break // a line cut by a kill: the episodes before it stand
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func headerDiff(got, want journalHeader) string {
	switch {
	case got.Model != want.Model:
		return fmt.Sprintf("--model %s", got.Model)
	case strings.Join(got.Strategies, ",") != strings.Join(want.Strategies, ","):
		return fmt.Sprintf("strategies %s", strings.Join(got.Strategies, ","))
	case got.Turns != want.Turns:
		return fmt.Sprintf("--turns %d", got.Turns)
	case got.Difficulty != want.Difficulty:
		return fmt.Sprintf("--difficulty %d", got.Difficulty)
	case got.Seed != want.Seed:
		return fmt.Sprintf("--seed %d", got.Seed)
	case got.Scenes != want.Scenes:
		return "other scenes"
	}
	gs, _ := json.Marshal(got.Sampling)
	ws, _ := json.Marshal(want.Sampling)
	if !bytes.Equal(gs, ws) {
		return "another system prompt or other sampling parameters (" + string(gs) + ")"
	}
	return ""
}

// commit writes a finished episode: its turns in one write, then its journal line.
func (o *output) commit(id string, turns int, b []byte) error {
	if _, err := o.w.Write(b); err != nil {
		return fmt.Errorf("write turns: %w", err)
	}
	if o.journal == nil {
		return nil
	}
	// The turns reach the disk before the journal says they are there: after a power cut
	// the journal never vouches for bytes the file lost (a kill -9 alone would not need it).
	if err := o.f.Sync(); err != nil {
		return fmt.Errorf("write turns: %w", err)
	}
	o.end += int64(len(b))
	jb, _ := json.Marshal(journalEntry{Episode: id, Turns: turns, End: o.end})
	if _, err := o.journal.Write(append(jb, '\n')); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

func (o *output) close() {
	if o.f != nil {
		o.f.Sync()
		o.f.Close()
	}
	if o.journal != nil {
		o.journal.Sync()
		o.journal.Close()
	}
}

// Digest identifies scenes input for --resume.
func Digest(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:8])
}

// turnCount counts the turns answered of those planned, for the progress bar. A rule
// episode's length depends on the answers, so the planned count is its plan, not a promise.
type turnCount struct {
	report  progress.Func
	planned int64
	turns   atomic.Int64
}

// add counts one more turn answered and reports it (a total below the count would end the
// bar early).
func (c *turnCount) add() {
	n := c.turns.Add(1)
	c.report.Report(n, max(c.planned, n))
}

// PlannedTurn is a user turn a run would send before any answer can change the plan.
type PlannedTurn struct {
	Episode string
	Turn    int
	Action  Action
	Phase   Phase
	Text    string
}

// DryRun lists, per episode, the user turns a run would start with: the opening question of
// a rule episode (its next turns depend on the answers), every turn of a cross-image test.
func DryRun(opts Options) ([]PlannedTurn, []Skipped, error) {
	eps, skipped := plan(&opts)
	if len(eps) == 0 {
		return nil, skipped, errors.New("no episodes to run: " + skippedText(skipped))
	}
	var out []PlannedTurn
	for _, ep := range eps {
		p := opts.newPlanner(ep)
		for n := 1; ; n++ {
			s, ok := p.next("")
			if !ok {
				break
			}
			out = append(out, PlannedTurn{ep.id, n, s.Action, s.Phase, s.Text})
			if ep.strategy == StrategyRules {
				break
			}
		}
	}
	return out, skipped, nil
}
