// Package deploy holds the tests of the deployment files beside it: the
// systemd unit (systemd-analyze), the Kubernetes manifest (the server starts
// with its configuration), and the Prometheus alert rules and Grafana
// dashboard (promtool, and every metric they name is one the server exports).
// It has no code of its own.
package deploy
