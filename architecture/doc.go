// Package architecture holds no code: its tests check the repository's
// shape against what the README describes. dependencies_test.go checks the
// module graph; architecture_test.go the layout (no tests at the root, a
// thin cli, one composition root in mcpserver/internal/app, a state domain
// without SQL, a test file and a snapshot per tool, a README naming every
// folder); copies_test.go that no code is written twice, near-copies
// included.
package architecture
