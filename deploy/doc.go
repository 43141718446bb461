// Package deploy holds deployment artefacts (Dockerfile, Kubernetes manifests, Prometheus alert
// rules, Grafana dashboard) and the test that keeps the alert rules parseable. No runtime code.
package deploy
