// Package repocheck keeps the repository self-contained: its test walks
// every Go and Markdown file from the module root and fails when one
// cites a file that lives outside the repository (the architecture notes
// and client references the project was started from, or any path into a
// sibling "shared" folder), and when a citation of the repository's own
// docs points at nothing: "docs/clients.md rule N" must name a rule that
// docs/clients.md numbers, a section of docs/DESIGN.md cited by its heading
// in double quotes must be a heading there, and any other file of docs/
// named must exist.
//
// A reader of the repository has only the repository, so what a comment
// relies on belongs in docs/ (or is a KIP, a KAFKA-NNNN JIRA or an RFC).
//
// Check holds the rules and takes the files to check, so the test runs
// them both on the repository and on small trees that must fail.
//
// Two more tests hold docs to the code they describe: the flags of
// `weir serve --help` that set a Kafka config are the config table's
// Entry.Flag and appear in docs/configs.md
// (TestServeFlagsAreInTheConfigTable), and the version ranges of
// docs/clients.md rule 11 are those of wire's API table
// (TestClientsRangesMatchAPITable).
package repocheck
