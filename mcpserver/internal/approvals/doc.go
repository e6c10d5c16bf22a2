// Package approvals is the console's backend on the order workflow: it
// checks approvers, limits them to their stores, and passes decisions to
// package replenish. It keeps no state and reaches StoreLink only through
// the workflow.
package approvals
