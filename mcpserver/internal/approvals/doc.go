// Package approvals is the approvals console's backend on the real order
// workflow: it checks approvers against the state database, limits each
// approver to the stores they cover, reads the inbox, the history and the
// evidence of an order, and passes approve and reject to package replenish.
// It keeps no state of its own and speaks to StoreLink only through the
// workflow.
package approvals
