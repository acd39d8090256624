// Package simulate is the M3Bench test simulator of the action-space document: from scenes
// (images, their objects and attributes, a task with its required evidence) it plays
// adaptive multi-turn test episodes against a VLM and writes each turn as a record that
// `m3eval import` reads, with the meta keys the judge uses.
//
// Two strategies choose the user turns. The rule strategy (rules.go) tracks which required
// evidence the model's answers activate (entity and value mentions, English and Chinese,
// with the document's synonym table) and lets the coverage and the phase pick the next
// action. The cross-image test (crossimage.go) grounds each image, pads the conversation
// with filler turns, then probes the confusable objects with ambiguous references,
// attribute swaps and long-context recall. Templates (templates.go) exist in Chinese (the
// document's) and English; a seeded generator per episode picks among them, so a seed
// reproduces a run.
//
// Run schedules episodes over a VLM client concurrently and writes every finished episode
// whole, journaled, so an interrupted run resumes without writing a turn twice.
package simulate
