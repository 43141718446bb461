// Package deploy holds deployment artefacts: the Dockerfile of the one image, the Postgres roles a
// DBA creates once (postgres/init.sql), and the Prometheus scrape configuration and alert rules
// (prometheus/); docker-compose.yml at the repository root runs them together. Its tests keep
// the alert rules parseable and naming only metrics some process exports. No runtime code. There
// are no Kubernetes manifests or Grafana dashboards here: README.md ("Running one piece alone")
// says what a deployment must set, the termination grace periods included.
package deploy
