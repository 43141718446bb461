DROP TABLE sandbox.identities;
