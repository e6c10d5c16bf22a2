// Package architecture holds no code: its tests keep the repository's shape
// true to the README. They check the module graph, the layout (no tests at the
// root, a thin cli beside one composition root, a state domain without SQL,
// a test file and a snapshot per tool), the public API (no exported name
// uses an internal type), size limits of functions and files, the docs
// index and ADR table, and that no code is written twice.
package architecture
