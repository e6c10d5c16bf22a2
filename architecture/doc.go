// Package architecture holds no code: its tests pin the repository's shape,
// so that a newcomer's map of it stays true. The module graph the README
// draws (dependencies_test.go), and the layout rules (architecture_test.go):
// no tests at the repo root, a thin cli beside one composition root
// (mcpserver/internal/app), a state domain without SQL beside its two
// storage packages, a test file and a snapshot per tool, a README layout
// naming every folder, and no code written twice.
package architecture
