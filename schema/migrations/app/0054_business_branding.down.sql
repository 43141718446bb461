DROP TABLE app.business_branding;
