DROP FUNCTION app.open_demo_request(text, timestamptz);
DROP TABLE app.demo_requests;
