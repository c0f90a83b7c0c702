// Package deploy holds the tests of the deployment kit in this directory:
// the container image (Containerfile, Containerfile.prebuilt), the
// Kubernetes manifests (kubernetes/), the compose file (compose/), the
// Grafana dashboard (grafana/) and the Prometheus alerting rules
// (prometheus/). Each artifact is checked with its upstream parser or API
// types, Prometheus's files with promtool, and the metrics the dashboard
// and rules read are checked against a running neardup. It is a module of
// its own so that the product's dependency graph stays free of Kubernetes,
// Prometheus and BuildKit.
package deploy
