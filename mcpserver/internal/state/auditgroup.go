package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// MaxAuditGroup is the most audit records one group commit writes, so a
// backlog after a stall is written in bounded transactions.
const MaxAuditGroup = 128

// ErrAuditClosed is returned by AuditGroup.Record after Close.
var ErrAuditClosed = errors.New("state: audit log closed")

// AuditRowError blames the record at Index for a group write's failure; a
// backend returns it when the database refused that record's statement.
// Any other error fails the whole group.
type AuditRowError struct {
	Index int
	Err   error
}

func (e *AuditRowError) Error() string { return e.Err.Error() }
func (e *AuditRowError) Unwrap() error { return e.Err }

// WriteAuditFunc writes recs in one transaction: all of them or none.
type WriteAuditFunc func(ctx context.Context, recs []AuditRecord) error

// AuditGroup is the group commit of audit records both backends use
// (ADR 0026). One writer writes every queued record (up to MaxAuditGroup)
// in one call. A record the database refuses (AuditRowError) fails alone;
// any other failure goes to every caller of the group.
type AuditGroup struct {
	write WriteAuditFunc
	max   int
	wake  chan struct{}
	done  chan struct{}

	mu    sync.Mutex
	queue []*pendingAudit
	// busy is set while a write is under way: one write at a time.
	busy     bool
	inFlight int
	closed   bool
}

// pendingAudit is one Record call waiting for its group.
type pendingAudit struct {
	rec AuditRecord
	// taken is set, under mu, once the writer took the record.
	taken bool
	err   error
	done  chan struct{}
}

// NewAuditGroup starts the writer goroutine of a group commit over write.
// Close stops it.
func NewAuditGroup(write WriteAuditFunc) *AuditGroup {
	g := &AuditGroup{write: write, max: MaxAuditGroup, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go g.run()
	return g
}

// Record writes r and returns once it is committed, with r's error if any.
// With nothing queued or being written the caller writes r itself. A
// caller whose ctx ends while r is still queued takes it back; once r is
// being written, the caller waits for the outcome.
func (g *AuditGroup) Record(ctx context.Context, r AuditRecord) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrAuditClosed
	}
	if !g.busy && len(g.queue) == 0 {
		g.busy, g.inFlight = true, 1
		g.mu.Unlock()
		err := g.write(context.WithoutCancel(ctx), []AuditRecord{r})
		g.mu.Lock()
		g.busy, g.inFlight = false, 0
		more := len(g.queue) > 0 || g.closed
		g.mu.Unlock()
		if more {
			g.signal()
		}
		return err
	}
	p := &pendingAudit{rec: r, done: make(chan struct{})}
	g.queue = append(g.queue, p)
	g.mu.Unlock()
	g.signal()
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	if !p.taken {
		g.queue = slices.DeleteFunc(g.queue, func(q *pendingAudit) bool { return q == p })
		g.mu.Unlock()
		return fmt.Errorf("state: record audit for call %s: %w", r.CallID, ctx.Err())
	}
	g.mu.Unlock()
	<-p.done
	return p.err
}

// Backlog returns how many records are queued and how many are being
// written.
func (g *AuditGroup) Backlog() (queued, inFlight int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue), g.inFlight
}

// Close refuses new records, writes the queued ones, and stops the writer.
func (g *AuditGroup) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.signal()
	<-g.done
}

// signal wakes the writer; a pending wake is enough.
func (g *AuditGroup) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// run is the writer loop, until Close with nothing queued or being written.
func (g *AuditGroup) run() {
	defer close(g.done)
	for {
		g.mu.Lock()
		for len(g.queue) == 0 || g.busy {
			if g.closed && len(g.queue) == 0 && !g.busy {
				g.mu.Unlock()
				return
			}
			g.mu.Unlock()
			<-g.wake
			g.mu.Lock()
		}
		n := min(len(g.queue), g.max)
		group := g.queue[:n:n]
		if n < len(g.queue) {
			g.queue = slices.Clone(g.queue[n:])
		} else {
			g.queue = nil
		}
		for _, p := range group {
			p.taken = true
		}
		g.busy, g.inFlight = true, n
		g.mu.Unlock()

		g.commit(group)

		g.mu.Lock()
		g.busy, g.inFlight = false, 0
		g.mu.Unlock()
	}
}

// commit writes group and releases its callers. A blamed record fails
// alone and the rest is written again: at most n+1 writes.
func (g *AuditGroup) commit(group []*pendingAudit) {
	// The group outlives any one caller's context.
	ctx := context.Background()
	recs := make([]AuditRecord, 0, len(group))
	for len(group) > 0 {
		recs = recs[:0]
		for _, p := range group {
			recs = append(recs, p.rec)
		}
		err := g.write(ctx, recs)
		var row *AuditRowError
		if err != nil && len(group) > 1 && errors.As(err, &row) && row.Index >= 0 && row.Index < len(group) {
			group[row.Index].finish(err)
			group = slices.Delete(group, row.Index, row.Index+1)
			continue
		}
		for _, p := range group {
			p.finish(err)
		}
		return
	}
}

func (p *pendingAudit) finish(err error) {
	p.err = err
	close(p.done)
}
