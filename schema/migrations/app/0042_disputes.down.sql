DROP TABLE app.dispute_sla_policies;
DROP TABLE app.dispute_events;
DROP FUNCTION app.dispute_events_append_only();
DROP TABLE app.disputes;
