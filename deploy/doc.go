// Package deploy holds the tests of the deployment files beside it: systemd,
// Kubernetes, Prometheus and Grafana. It has no code of its own.
package deploy
