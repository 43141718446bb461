DROP TABLE app.kyc_documents, app.kyc_submissions;
