-- A schema-7 journal as fencekeeper 08807d5 (the last landed before writer_starts) wrote it:
-- `fencekeeper demo` (the upstream incident, three suspends), dumped with sqlite3 .dump.
-- tests/writer_starts_test.cc upgrades it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
) STRICT;
INSERT INTO schema_migrations VALUES(1,'0001_init','2026-12-04T15:23:45.663Z');
INSERT INTO schema_migrations VALUES(2,'0002_leadership_view','2026-12-04T15:23:45.665Z');
INSERT INTO schema_migrations VALUES(3,'0003_growth_bounds','2026-12-04T15:23:45.666Z');
INSERT INTO schema_migrations VALUES(4,'0004_writer_id','2026-12-04T15:23:45.667Z');
INSERT INTO schema_migrations VALUES(5,'0005_compact_journal','2026-12-04T15:23:45.676Z');
INSERT INTO schema_migrations VALUES(6,'0006_hash_chain','2026-12-04T15:23:45.678Z');
INSERT INTO schema_migrations VALUES(7,'0007_retention','2026-12-04T15:23:45.680Z');
CREATE TABLE IF NOT EXISTS "events_v1" (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after a rollback
  recorded_at TEXT    NOT NULL,                   -- RFC 3339 UTC
  kind        TEXT    NOT NULL,                   -- fence_observed | sandbox_observed | decided | suspend_intent | suspend_outcome
  namespace   TEXT    NOT NULL,
  name        TEXT    NOT NULL,                   -- sandbox name, or policy name for fence_observed
  uid         TEXT    NOT NULL,                   -- sandbox uid ('' for fence_observed)
  ref_seq     INTEGER REFERENCES "events_v1" (seq),    -- suspend_outcome: the intent it resolves
  payload     TEXT    NOT NULL CHECK (json_valid(payload))
) STRICT;
CREATE TABLE subjects (
  id        INTEGER PRIMARY KEY,
  namespace TEXT    NOT NULL,
  name      TEXT    NOT NULL,               -- sandbox, policy or lease name
  uid       TEXT    NOT NULL,               -- sandbox uid ('' for a policy or a lease)
  base      TEXT    CHECK (base IS NULL OR json_valid(base))  -- a sandbox's first observation, compact
) STRICT;
INSERT INTO subjects VALUES(1,'openshell-agents','openshell-sandbox-workloads','',NULL);
INSERT INTO subjects VALUES(2,'openshell-agents','openshell-sandbox-supervisors','',NULL);
INSERT INTO subjects VALUES(3,'openshell-agents','active-1','a226c426-5e3d-4000-8000-000000000014','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"14f7519b-5e3d-4000-8000-000000000012"},"sp":{"p":1,"u":"a7760b07-5e3d-4000-8000-000000000013"}}');
INSERT INTO subjects VALUES(4,'openshell-agents','active-2','13d561f4-5e3d-4000-8000-000000000017','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"a459ff4f-5e3d-4000-8000-000000000015"},"sp":{"p":1,"u":"31a32029-5e3d-4000-8000-000000000016"}}');
INSERT INTO subjects VALUES(5,'openshell-agents','active-3','806724e5-5e3d-4000-8000-00000000001a','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"1f93576d-5e3d-4000-8000-000000000018"},"sp":{"p":1,"u":"0782e22b-5e3d-4000-8000-000000000019"}}');
INSERT INTO subjects VALUES(6,'openshell-agents','stopped-1','b439e5cc-5e3d-4000-8000-000000000005','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-1","su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"88577971-5e3d-4000-8000-000000000004"}}');
INSERT INTO subjects VALUES(7,'openshell-agents','stopped-2','3d27d803-5e3d-4000-8000-000000000007','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-2","su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"9c33e864-5e3d-4000-8000-000000000006"}}');
INSERT INTO subjects VALUES(8,'openshell-agents','stopped-3','ddb3167d-5e3d-4000-8000-000000000009','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-3","su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"8cab1c2b-5e3d-4000-8000-000000000008"}}');
INSERT INTO subjects VALUES(9,'openshell-agents','stopped-4','6a4a8790-5e3d-4000-8000-00000000000b','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-4","su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"752120c8-5e3d-4000-8000-00000000000a"}}');
INSERT INTO subjects VALUES(10,'openshell-agents','stopped-5','0b1cebdb-5e3d-4000-8000-00000000000d','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-5","su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"9fe32a06-5e3d-4000-8000-00000000000c"}}');
INSERT INTO subjects VALUES(11,'openshell-agents','stopped-6','2ce6c2b7-5e3d-4000-8000-00000000000f','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-6","su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"ff21dad5-5e3d-4000-8000-00000000000e"}}');
INSERT INTO subjects VALUES(12,'openshell-agents','stopped-7','76e16abc-5e3d-4000-8000-000000000011','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-7","su":1,"wf":{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"5887f509-5e3d-4000-8000-000000000010"}}');
INSERT INTO subjects VALUES(13,'team-healthy','openshell-sandbox-workloads','',NULL);
INSERT INTO subjects VALUES(14,'team-healthy','openshell-sandbox-supervisors','',NULL);
INSERT INTO subjects VALUES(15,'team-healthy','healthy-1','eeacd59d-5e3d-4000-8000-000000000020','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"34aaac10-5e3d-4000-8000-00000000001c","g":1,"i":1},"sf":{"p":1,"u":"e89a1d33-5e3d-4000-8000-00000000001d","g":1,"i":1},"wp":{"p":1,"u":"94141411-5e3d-4000-8000-00000000001e"},"sp":{"p":1,"u":"74e29022-5e3d-4000-8000-00000000001f"}}');
INSERT INTO subjects VALUES(16,'team-healthy','healthy-2','779ae649-5e3d-4000-8000-000000000023','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"34aaac10-5e3d-4000-8000-00000000001c","g":1,"i":1},"sf":{"p":1,"u":"e89a1d33-5e3d-4000-8000-00000000001d","g":1,"i":1},"wp":{"p":1,"u":"b7c33731-5e3d-4000-8000-000000000021"},"sp":{"p":1,"u":"939f650b-5e3d-4000-8000-000000000022"}}');
CREATE TABLE journal (
  seq     INTEGER PRIMARY KEY,              -- the seq of the row's first event
  at      INTEGER NOT NULL,                 -- recorded_at: ms since the epoch, UTC
  kind    INTEGER NOT NULL,                 -- journal_kinds.kind
  subject INTEGER NOT NULL REFERENCES subjects (id),
  ref     INTEGER,                          -- suspend_outcome: the seq of its intent
  body    TEXT    NOT NULL CHECK (json_valid(body))
, hash TEXT
  CHECK (hash IS NULL OR (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'))) STRICT;
INSERT INTO journal VALUES(1,1796397825706,1,1,NULL,'{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":1,"i":1}','29fb4b28fad5dccd5038a37210e91a1311cbadfd25f52b58b2e10c6b0a0821d0');
INSERT INTO journal VALUES(2,1796397825706,1,2,NULL,'{"p":1,"u":"a974cfa2-5e3d-4000-8000-000000000003","g":1,"i":1}','e16a5cc66612274e254037ce52e7901fc0f83804e24781a1e4917e0f620d286e');
INSERT INTO journal VALUES(3,1796397825706,8,3,NULL,'{"o":{},"d":[3,0,0]}','ccb181b0ccd2656c6255722b6865c71b579e8d0f57d437d9920f10fd3e4f7dc2');
INSERT INTO journal VALUES(5,1796397825711,8,4,NULL,'{"o":{},"d":[3,0,0]}','f277678e6626ff12f9c9aa791d50bf2d01df93e98ef8b81818d1b52be7a1f212');
INSERT INTO journal VALUES(7,1796397825712,8,5,NULL,'{"o":{},"d":[3,0,0]}','c38790bb96b8ddf87aa121ea5841ddee39210d377ce60e5c266430dfa815b7f1');
INSERT INTO journal VALUES(9,1796397825713,8,6,NULL,'{"o":{},"d":[3,0,0]}','1824b94d9f1aaee944ef382593ce52fa958530330d8bff987ff754db84708e0c');
INSERT INTO journal VALUES(11,1796397825714,8,7,NULL,'{"o":{},"d":[3,0,0]}','b77036b6fd269525f81ea852e4cf0ec0fb301fdc94451a569c0732a3a415df05');
INSERT INTO journal VALUES(13,1796397825715,8,8,NULL,'{"o":{},"d":[3,0,0]}','ce11cc55d7db12ff92322cdb0aec6599bb05c85f94fbbf1263031d939f775578');
INSERT INTO journal VALUES(15,1796397825715,8,9,NULL,'{"o":{},"d":[3,0,0]}','848f53f2e892b12fe5fd971302df3ef854510e638f8c223096a2cc77f5a95658');
INSERT INTO journal VALUES(17,1796397825716,8,10,NULL,'{"o":{},"d":[3,0,0]}','1e62557255f83f82775e908252aae20edb90370eec5019333e7021ddf3721568');
INSERT INTO journal VALUES(19,1796397825716,8,11,NULL,'{"o":{},"d":[3,0,0]}','0aafd05176b565f5c43e541bc7df52aa24a44b745e6bb94840de1142772e8d0d');
INSERT INTO journal VALUES(21,1796397825717,8,12,NULL,'{"o":{},"d":[3,0,0]}','675fdc5f194668f05f385163656872b445b6c8a66577941c3bc09ec85a88ec5f');
INSERT INTO journal VALUES(23,1796397825718,1,13,NULL,'{"p":1,"u":"34aaac10-5e3d-4000-8000-00000000001c","g":1,"i":1}','e6c96daca21bead6906ad7f011e0989fb4c20c99177ea05bd54eaee67e7385ba');
INSERT INTO journal VALUES(24,1796397825718,1,14,NULL,'{"p":1,"u":"e89a1d33-5e3d-4000-8000-00000000001d","g":1,"i":1}','36018db383399849e4b9799ea51b380a198f76053d6484112c5725ce1856bc7a');
INSERT INTO journal VALUES(25,1796397825718,8,15,NULL,'{"o":{},"d":[3,0,0]}','30473c94d2bf1177a55fabf1faed2481e7d445d54b5e44fc22e0fca29f4c1602');
INSERT INTO journal VALUES(27,1796397825718,8,16,NULL,'{"o":{},"d":[3,0,0]}','e66bc3bb0d0cfcb4edd4d0f27e2a99880123e5e6d9e7a131f9e31cb802f8ae1f');
INSERT INTO journal VALUES(29,1796397825890,1,1,NULL,'{"p":1,"u":"b4e79a25-5e3d-4000-8000-000000000002","g":2,"i":1}','a3c58cb8df7bc4b783bef938bbcd9d72d2a11f60deff63e962e77ee2a19cc0c7');
INSERT INTO journal VALUES(30,1796397825890,9,3,NULL,'{"o":{"wf":{"g":2}},"d":[1,3,1,"fence generation 1 -> 2"],"i":{"rv":"29","w":"31d043e0c5ea4aedd88b19c6d2002ef9"}}','ffd3296bd10ed3b4516ec25d594287376cacea302c041bfb0197377dc0d300cd');
INSERT INTO journal VALUES(33,1796397825893,5,3,32,'[1,2]','576c70d91e21e78d67c081635b4e7c9a3c3742ff44c5308d68174e80d0879a59');
INSERT INTO journal VALUES(34,1796397825894,9,4,NULL,'{"o":{"wf":{"g":2}},"d":[1,3,1,"fence generation 1 -> 2"],"i":{"rv":"33","w":"31d043e0c5ea4aedd88b19c6d2002ef9"}}','78ba2171e1ad4f00500f56eedb0ed3247573155722e404efee0d56341ca54659');
INSERT INTO journal VALUES(37,1796397825897,5,4,36,'[1,2]','647bb35970b8f55fa1e149e42dda04fef31d75375de6e9e086766dcf98c6f895');
INSERT INTO journal VALUES(38,1796397825898,9,5,NULL,'{"o":{"wf":{"g":2}},"d":[1,3,1,"fence generation 1 -> 2"],"i":{"rv":"37","w":"31d043e0c5ea4aedd88b19c6d2002ef9"}}','29191d965e495dbb5c53a1ffcaa4fee3e7a0803c6580fab59f2621e278c91cef');
INSERT INTO journal VALUES(41,1796397825899,5,5,40,'[1,2]','cc7368b805b7b975e79f769b0bc70d5c7850dff0449e4bca0f2743462fac7684');
INSERT INTO journal VALUES(42,1796397825900,8,6,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','4a0d97c976c03301e67ae79a190e544be00611fc8a5ea5fc1a14e096efedd3c3');
INSERT INTO journal VALUES(44,1796397825901,8,7,NULL,'{"o":{"wf":{"g":2},"t":-1},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','581b30a8f54b373bc111f64b0a6355b6a7a564fad51fbdf62c85599c2969a4ca');
INSERT INTO journal VALUES(46,1796397825901,8,8,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','ce226bb6cf5b434152a8976e0384b6d73447585eb293c122369fec27ebb474c5');
INSERT INTO journal VALUES(48,1796397825902,8,9,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','3f973321d897c9ff92560ed50e97563b54cf19b69217a055b17a2e7819320d72');
INSERT INTO journal VALUES(50,1796397825903,8,10,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','63ee66758846d643ecf41a3c30436248175372c7ca411933e85b4d9129e15319');
INSERT INTO journal VALUES(52,1796397825903,8,11,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','5611af9dc9f61955f3e6a5de40d808de52811065a04380aac17f2ccb77e2bf95');
INSERT INTO journal VALUES(54,1796397825904,8,12,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','759e69f1813c9f751e665b680dbde593e54cecc2a645f457c43f5d4cfcca2296');
INSERT INTO journal VALUES(56,1796397825905,8,3,NULL,'{"o":{"g":2,"wu":"14f7519b-5e3d-4000-8000-000000000012","wf":{"g":2},"ha":2,"r":null,"wp":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','e681c966df3dbb2a4a443bb2e0a234dc6ef1de99b379dcf00d27fad5d4c6ab35');
INSERT INTO journal VALUES(58,1796397825906,8,4,NULL,'{"o":{"g":2,"wu":"a459ff4f-5e3d-4000-8000-000000000015","wf":{"g":2},"ha":2,"r":null,"wp":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','3bead7e48b5f3c6fac1cc0516b924cfab37f8b1fc696759eb01e0d8f59a5d737');
INSERT INTO journal VALUES(60,1796397825907,8,5,NULL,'{"o":{"g":2,"wu":"1f93576d-5e3d-4000-8000-000000000018","wf":{"g":2},"ha":2,"r":null,"wp":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','fef32a3b868e9290ab8598390bb75f242c53f258b18cb57ba2a1553deedb623a');
CREATE TABLE journal_kinds (
  kind   INTEGER NOT NULL,
  part   INTEGER NOT NULL,                  -- seq = journal.seq + part
  event  TEXT    NOT NULL,                  -- the event kind of schema 4
  PRIMARY KEY (kind, part)
) STRICT, WITHOUT ROWID;
INSERT INTO journal_kinds VALUES(1,0,'fence_observed');
INSERT INTO journal_kinds VALUES(2,0,'sandbox_observed');
INSERT INTO journal_kinds VALUES(3,0,'decided');
INSERT INTO journal_kinds VALUES(4,0,'suspend_intent');
INSERT INTO journal_kinds VALUES(5,0,'suspend_outcome');
INSERT INTO journal_kinds VALUES(6,0,'leadership');
INSERT INTO journal_kinds VALUES(7,0,'forgotten');
INSERT INTO journal_kinds VALUES(8,0,'sandbox_observed');
INSERT INTO journal_kinds VALUES(8,1,'decided');
INSERT INTO journal_kinds VALUES(9,0,'sandbox_observed');
INSERT INTO journal_kinds VALUES(9,1,'decided');
INSERT INTO journal_kinds VALUES(9,2,'suspend_intent');
INSERT INTO journal_kinds VALUES(10,0,'pruned');
CREATE TABLE journal_names (
  field TEXT    NOT NULL,
  code  INTEGER NOT NULL,
  name  TEXT    NOT NULL,
  PRIMARY KEY (field, code)
) STRICT, WITHOUT ROWID;
INSERT INTO journal_names VALUES('action',0,'none');
INSERT INTO journal_names VALUES('action',1,'patch-suspend');
INSERT INTO journal_names VALUES('api_version',0,'v1beta1');
INSERT INTO journal_names VALUES('api_version',1,'v1alpha1');
INSERT INTO journal_names VALUES('bootstrap_op',0,'');
INSERT INTO journal_names VALUES('bootstrap_op',1,'create');
INSERT INTO journal_names VALUES('bootstrap_op',2,'restart');
INSERT INTO journal_names VALUES('bootstrap_op',3,'stop');
INSERT INTO journal_names VALUES('bootstrap_op',4,'other');
INSERT INTO journal_names VALUES('outcome',0,'pending');
INSERT INTO journal_names VALUES('outcome',1,'applied');
INSERT INTO journal_names VALUES('outcome',2,'conflict');
INSERT INTO journal_names VALUES('outcome',3,'failed');
INSERT INTO journal_names VALUES('outcome',4,'superseded');
INSERT INTO journal_names VALUES('reason',0,'');
INSERT INTO journal_names VALUES('reason',1,'fence-missing');
INSERT INTO journal_names VALUES('reason',2,'fence-altered');
INSERT INTO journal_names VALUES('reason',3,'fence-stale');
INSERT INTO journal_names VALUES('reason',4,'workload-generation-changed');
INSERT INTO journal_names VALUES('reason',5,'supervisor-generation-changed');
INSERT INTO journal_names VALUES('verdict',0,'ignore');
INSERT INTO journal_names VALUES('verdict',1,'suspend');
INSERT INTO journal_names VALUES('verdict',2,'hold');
INSERT INTO journal_names VALUES('verdict',3,'healthy');
INSERT INTO journal_names VALUES('verdict',4,'admitting');
CREATE TABLE IF NOT EXISTS "fence_projection" (
  namespace  TEXT    NOT NULL,
  policy     TEXT    NOT NULL,
  present    INTEGER NOT NULL CHECK (present IN (0, 1)),
  policy_uid TEXT    NOT NULL,
  generation INTEGER NOT NULL,
  intact     INTEGER NOT NULL CHECK (intact IN (0, 1)),
  seq        INTEGER NOT NULL,
  updated_at TEXT    NOT NULL,
  subject    INTEGER REFERENCES subjects (id),
  PRIMARY KEY (namespace, policy)
) STRICT, WITHOUT ROWID;
INSERT INTO fence_projection VALUES('openshell-agents','openshell-sandbox-supervisors',1,'a974cfa2-5e3d-4000-8000-000000000003',1,1,2,'2026-12-04T15:23:45.706Z',2);
INSERT INTO fence_projection VALUES('openshell-agents','openshell-sandbox-workloads',1,'b4e79a25-5e3d-4000-8000-000000000002',2,1,29,'2026-12-04T15:23:45.890Z',1);
INSERT INTO fence_projection VALUES('team-healthy','openshell-sandbox-supervisors',1,'e89a1d33-5e3d-4000-8000-00000000001d',1,1,24,'2026-12-04T15:23:45.718Z',14);
INSERT INTO fence_projection VALUES('team-healthy','openshell-sandbox-workloads',1,'34aaac10-5e3d-4000-8000-00000000001c',1,1,23,'2026-12-04T15:23:45.718Z',13);
CREATE TABLE IF NOT EXISTS "sandbox_projection" (
  sandbox_uid         TEXT    PRIMARY KEY,
  namespace           TEXT    NOT NULL,
  name                TEXT    NOT NULL,
  verdict             TEXT,
  reason              TEXT,
  action              TEXT,
  observed_generation INTEGER,
  observation         TEXT    CHECK (observation IS NULL OR json_valid(observation)),
  observation_seq     INTEGER,
  decision            TEXT    CHECK (decision IS NULL OR json_valid(decision)),
  decision_seq        INTEGER,
  pending_intent_seq  INTEGER,
  applied_generation  INTEGER,
  updated_at          TEXT    NOT NULL,
  refused_intent_seq  INTEGER,
  subject             INTEGER REFERENCES subjects (id)
) STRICT;
INSERT INTO sandbox_projection VALUES('eeacd59d-5e3d-4000-8000-000000000020','team-healthy','healthy-1','healthy','','none',1,'{"sandbox":{"namespace":"team-healthy","name":"healthy-1","uid":"eeacd59d-5e3d-4000-8000-000000000020","generation":1,"api_version":"v1beta1","deleting":false,"should_run":true,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"34aaac10-5e3d-4000-8000-00000000001c","fence_generation":1,"workload_uid":"94141411-5e3d-4000-8000-00000000001e","supervisor_uid":"74e29022-5e3d-4000-8000-00000000001f"},"workload_fence":{"present":true,"uid":"34aaac10-5e3d-4000-8000-00000000001c","generation":1,"intact":true},"supervisor_fence":{"present":true,"uid":"e89a1d33-5e3d-4000-8000-00000000001d","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"94141411-5e3d-4000-8000-00000000001e","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"74e29022-5e3d-4000-8000-00000000001f","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825718}',25,'{"verdict":"healthy","reason":"","action":"none","note":"","reevaluate_at_ms":null}',26,NULL,NULL,'2026-12-04T15:23:45.718Z',NULL,15);
INSERT INTO sandbox_projection VALUES('779ae649-5e3d-4000-8000-000000000023','team-healthy','healthy-2','healthy','','none',1,'{"sandbox":{"namespace":"team-healthy","name":"healthy-2","uid":"779ae649-5e3d-4000-8000-000000000023","generation":1,"api_version":"v1beta1","deleting":false,"should_run":true,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"34aaac10-5e3d-4000-8000-00000000001c","fence_generation":1,"workload_uid":"b7c33731-5e3d-4000-8000-000000000021","supervisor_uid":"939f650b-5e3d-4000-8000-000000000022"},"workload_fence":{"present":true,"uid":"34aaac10-5e3d-4000-8000-00000000001c","generation":1,"intact":true},"supervisor_fence":{"present":true,"uid":"e89a1d33-5e3d-4000-8000-00000000001d","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"b7c33731-5e3d-4000-8000-000000000021","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"939f650b-5e3d-4000-8000-000000000022","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825718}',27,'{"verdict":"healthy","reason":"","action":"none","note":"","reevaluate_at_ms":null}',28,NULL,NULL,'2026-12-04T15:23:45.718Z',NULL,16);
INSERT INTO sandbox_projection VALUES('b439e5cc-5e3d-4000-8000-000000000005','openshell-agents','stopped-1','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-1","uid":"b439e5cc-5e3d-4000-8000-000000000005","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-1","supervisor_uid":"88577971-5e3d-4000-8000-000000000004"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"88577971-5e3d-4000-8000-000000000004","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825900}',42,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',43,NULL,NULL,'2026-12-04T15:23:45.900Z',NULL,6);
INSERT INTO sandbox_projection VALUES('3d27d803-5e3d-4000-8000-000000000007','openshell-agents','stopped-2','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-2","uid":"3d27d803-5e3d-4000-8000-000000000007","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-2","supervisor_uid":"9c33e864-5e3d-4000-8000-000000000006"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"9c33e864-5e3d-4000-8000-000000000006","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825900}',44,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',45,NULL,NULL,'2026-12-04T15:23:45.901Z',NULL,7);
INSERT INTO sandbox_projection VALUES('ddb3167d-5e3d-4000-8000-000000000009','openshell-agents','stopped-3','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-3","uid":"ddb3167d-5e3d-4000-8000-000000000009","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-3","supervisor_uid":"8cab1c2b-5e3d-4000-8000-000000000008"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"8cab1c2b-5e3d-4000-8000-000000000008","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825901}',46,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',47,NULL,NULL,'2026-12-04T15:23:45.901Z',NULL,8);
INSERT INTO sandbox_projection VALUES('6a4a8790-5e3d-4000-8000-00000000000b','openshell-agents','stopped-4','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-4","uid":"6a4a8790-5e3d-4000-8000-00000000000b","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-4","supervisor_uid":"752120c8-5e3d-4000-8000-00000000000a"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"752120c8-5e3d-4000-8000-00000000000a","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825902}',48,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',49,NULL,NULL,'2026-12-04T15:23:45.902Z',NULL,9);
INSERT INTO sandbox_projection VALUES('0b1cebdb-5e3d-4000-8000-00000000000d','openshell-agents','stopped-5','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-5","uid":"0b1cebdb-5e3d-4000-8000-00000000000d","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-5","supervisor_uid":"9fe32a06-5e3d-4000-8000-00000000000c"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"9fe32a06-5e3d-4000-8000-00000000000c","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825903}',50,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',51,NULL,NULL,'2026-12-04T15:23:45.903Z',NULL,10);
INSERT INTO sandbox_projection VALUES('2ce6c2b7-5e3d-4000-8000-00000000000f','openshell-agents','stopped-6','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-6","uid":"2ce6c2b7-5e3d-4000-8000-00000000000f","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-6","supervisor_uid":"ff21dad5-5e3d-4000-8000-00000000000e"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"ff21dad5-5e3d-4000-8000-00000000000e","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825903}',52,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',53,NULL,NULL,'2026-12-04T15:23:45.903Z',NULL,11);
INSERT INTO sandbox_projection VALUES('76e16abc-5e3d-4000-8000-000000000011','openshell-agents','stopped-7','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-7","uid":"76e16abc-5e3d-4000-8000-000000000011","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-7","supervisor_uid":"5887f509-5e3d-4000-8000-000000000010"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"5887f509-5e3d-4000-8000-000000000010","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796397825904}',54,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',55,NULL,NULL,'2026-12-04T15:23:45.904Z',NULL,12);
INSERT INTO sandbox_projection VALUES('a226c426-5e3d-4000-8000-000000000014','openshell-agents','active-1','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-1","uid":"a226c426-5e3d-4000-8000-000000000014","generation":2,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"14f7519b-5e3d-4000-8000-000000000012","supervisor_uid":"a7760b07-5e3d-4000-8000-000000000013"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"a7760b07-5e3d-4000-8000-000000000013","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"observed_at_ms":1796397825905}',56,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',57,NULL,2,'2026-12-04T15:23:45.905Z',NULL,3);
INSERT INTO sandbox_projection VALUES('13d561f4-5e3d-4000-8000-000000000017','openshell-agents','active-2','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-2","uid":"13d561f4-5e3d-4000-8000-000000000017","generation":2,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"a459ff4f-5e3d-4000-8000-000000000015","supervisor_uid":"31a32029-5e3d-4000-8000-000000000016"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"31a32029-5e3d-4000-8000-000000000016","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"observed_at_ms":1796397825906}',58,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',59,NULL,2,'2026-12-04T15:23:45.906Z',NULL,4);
INSERT INTO sandbox_projection VALUES('806724e5-5e3d-4000-8000-00000000001a','openshell-agents','active-3','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-3","uid":"806724e5-5e3d-4000-8000-00000000001a","generation":2,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b4e79a25-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"1f93576d-5e3d-4000-8000-000000000018","supervisor_uid":"0782e22b-5e3d-4000-8000-000000000019"},"workload_fence":{"present":true,"uid":"b4e79a25-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"a974cfa2-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"0782e22b-5e3d-4000-8000-000000000019","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"observed_at_ms":1796397825907}',60,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',61,NULL,2,'2026-12-04T15:23:45.907Z',NULL,5);
CREATE TABLE archive_range (
  first_seq   INTEGER NOT NULL,   -- the first event the file holds
  last_seq    INTEGER NOT NULL,   -- the last event the file holds
  rows        INTEGER NOT NULL,   -- rows of `journal` and `events_v1` it holds
  anchor_seq  INTEGER NOT NULL,   -- the row before its first one (0: none)
  anchor_hash TEXT    NOT NULL,   -- that row's hash ('' when it carries none)
  head_seq    INTEGER NOT NULL,   -- its last chained row (0: none)
  head_hash   TEXT    NOT NULL,
  source      TEXT    NOT NULL,   -- the journal it was pruned from
  written_at  TEXT    NOT NULL    -- RFC 3339 UTC
) STRICT;
CREATE TABLE journal_base (
  key    TEXT NOT NULL PRIMARY KEY,
  record TEXT NOT NULL CHECK (json_valid(record))
) STRICT, WITHOUT ROWID;
DELETE FROM sqlite_sequence;
CREATE INDEX events_by_subject ON "events_v1" (uid, seq);
CREATE INDEX events_by_kind ON "events_v1" (kind, seq);
CREATE INDEX events_by_ref ON "events_v1" (ref_seq) WHERE ref_seq IS NOT NULL;
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON "events_v1"
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: UPDATE is not allowed');
END;
CREATE INDEX journal_by_subject ON journal (subject, seq);
CREATE INDEX journal_by_ref ON journal (ref) WHERE ref IS NOT NULL;
CREATE TRIGGER journal_append_only_update BEFORE UPDATE ON journal
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: UPDATE is not allowed');
END;
CREATE TRIGGER subjects_append_only_update BEFORE UPDATE ON subjects
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal subjects are append-only: UPDATE is not allowed');
END;
CREATE INDEX sandbox_projection_by_name ON sandbox_projection (namespace, name);
CREATE VIEW journal_rows AS
SELECT j.seq                                                            AS seq,
       j.at                                                             AS at,
       strftime('%Y-%m-%dT%H:%M:%S', j.at / 1000, 'unixepoch') ||
         printf('.%03dZ', j.at % 1000)                                  AS recorded_at,
       j.kind                                                           AS kind,
       s.namespace                                                      AS namespace,
       s.name                                                           AS name,
       s.uid                                                            AS uid,
       j.ref                                                            AS ref,
       j.body                                                           AS body,
       CASE WHEN j.kind IN (2, 8, 9)
            THEN json_patch(COALESCE(s.base, '{}'), json_extract(j.body, '$.o')) END AS obs
FROM journal AS j
JOIN subjects AS s ON s.id = j.subject;
CREATE VIEW transitions AS
SELECT i.seq                                                   AS seq,
       i.recorded_at                                           AS recorded_at,
       i.namespace                                             AS namespace,
       i.name                                                  AS sandbox,
       i.uid                                                   AS sandbox_uid,
       json_extract(i.payload, '$.action')                     AS action,
       json_extract(i.payload, '$.reason')                     AS reason,
       COALESCE(json_extract(o.payload, '$.outcome'), 'pending') AS outcome,
       COALESCE(NULLIF(json_extract(o.payload, '$.detail'), ''),
                json_extract(i.payload, '$.note'))              AS detail,
       json_extract(i.payload, '$.observed_generation')        AS observed_generation,
       json_extract(o.payload, '$.applied_generation')         AS applied_generation,
       o.seq                                                   AS outcome_seq,
       o.recorded_at                                           AS outcome_at,
       COALESCE(json_extract(i.payload, '$.writer'), '')       AS writer
FROM events AS i
LEFT JOIN (SELECT ref_seq, max(seq) AS seq, recorded_at, payload  -- the latest outcome
           FROM events WHERE kind = 'suspend_outcome' GROUP BY ref_seq) AS o
  ON o.ref_seq = i.seq
WHERE i.kind = 'suspend_intent'
;
CREATE VIEW fence_observations AS
SELECT seq,
       recorded_at,
       namespace,
       json_extract(payload, '$.policy')                               AS policy,
       NULLIF(json_extract(payload, '$.uid'), '')                      AS policy_uid,
       CASE WHEN json_extract(payload, '$.present')
            THEN json_extract(payload, '$.generation') END             AS generation,
       json_extract(payload, '$.intact')                               AS intact,
       json_extract(payload, '$.present')                              AS present
FROM events
WHERE kind = 'fence_observed';
CREATE VIEW sandbox_state AS
SELECT namespace,
       name                AS sandbox,
       sandbox_uid,
       verdict,
       updated_at,
       reason,
       action,
       observed_generation,
       pending_intent_seq,
       applied_generation,
       decision_seq
FROM sandbox_projection;
CREATE VIEW decisions AS
SELECT seq,
       recorded_at,
       namespace,
       name                                AS sandbox,
       uid                                 AS sandbox_uid,
       json_extract(payload, '$.verdict')  AS verdict,
       json_extract(payload, '$.reason')   AS reason,
       json_extract(payload, '$.action')   AS action,
       json_extract(payload, '$.note')     AS note
FROM events
WHERE kind = 'decided';
CREATE VIEW leadership AS
SELECT seq,
       recorded_at,
       namespace                             AS lease_namespace,
       name                                  AS lease,
       json_extract(payload, '$.identity')   AS identity,
       json_extract(payload, '$.state')      AS state
FROM events
WHERE kind = 'leadership';
CREATE VIEW forgotten_sandboxes AS
SELECT seq,
       recorded_at,
       namespace,
       name                                AS sandbox,
       uid                                 AS sandbox_uid,
       json_extract(payload, '$.detail')   AS detail
FROM events
WHERE kind = 'forgotten';
CREATE VIEW journal_head AS
SELECT seq, hash FROM journal WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1;
CREATE INDEX journal_pruned ON journal (seq) WHERE kind = 10;
CREATE VIEW journal_cut AS
SELECT COALESCE((SELECT anchor_seq FROM archive_range),
                (SELECT json_extract(body, '$.l') FROM journal WHERE kind = 10
                 ORDER BY seq DESC LIMIT 1), 0) AS last_pruned,
       COALESCE((SELECT anchor_hash FROM archive_range),
                (SELECT json_extract(body, '$.h') FROM journal WHERE kind = 10
                 ORDER BY seq DESC LIMIT 1), '') AS anchor_hash;
CREATE TRIGGER journal_append_only_delete BEFORE DELETE ON journal
WHEN OLD.seq > (SELECT COALESCE(max(json_extract(body, '$.l')), 0) FROM
                (SELECT body FROM journal WHERE kind = 10 ORDER BY seq DESC LIMIT 1))
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is allowed only of rows a pruned record covers');
END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON "events_v1"
WHEN OLD.seq > (SELECT COALESCE(max(json_extract(body, '$.l')), 0) FROM
                (SELECT body FROM journal WHERE kind = 10 ORDER BY seq DESC LIMIT 1))
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal events are append-only: DELETE is allowed only of rows a pruned record covers');
END;
CREATE TRIGGER subjects_append_only_delete BEFORE DELETE ON subjects
WHEN EXISTS (SELECT 1 FROM journal WHERE subject = OLD.id)
  OR EXISTS (SELECT 1 FROM sandbox_projection WHERE subject = OLD.id)
  OR EXISTS (SELECT 1 FROM fence_projection WHERE subject = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper journal subjects are append-only: DELETE is allowed only of a subject nothing names');
END;
CREATE VIEW events AS
SELECT seq, recorded_at, kind, namespace, name, uid, ref_seq, payload
FROM events_v1
UNION ALL
SELECT r.seq + k.part AS seq,
       r.recorded_at,
       k.event AS kind,
       r.namespace,
       r.name,
       r.uid,
       r.ref AS ref_seq,
       CASE k.event
         WHEN 'fence_observed' THEN json_object(
           'present', json(CASE WHEN json_extract(r.body, '$.p') THEN 'true' ELSE 'false' END),
           'uid', COALESCE(json_extract(r.body, '$.u'), ''),
           'generation', COALESCE(json_extract(r.body, '$.g'), 0),
           'intact', json(CASE WHEN json_extract(r.body, '$.i') THEN 'true' ELSE 'false' END),
           'policy', r.name)
         WHEN 'sandbox_observed' THEN json_object(
           'sandbox', json_object(
             'namespace', r.namespace,
             'name', r.name,
             'uid', r.uid,
             'generation', COALESCE(json_extract(r.obs, '$.g'), 0),
             'api_version', (SELECT name FROM journal_names WHERE field = 'api_version'
                             AND code = COALESCE(json_extract(r.obs, '$.v'), 0)),
             'deleting', json(CASE WHEN json_extract(r.obs, '$.x') THEN 'true' ELSE 'false' END),
             'should_run', json(CASE WHEN json_extract(r.obs, '$.r') THEN 'true' ELSE 'false' END),
             'bootstrapping', json(CASE WHEN json_extract(r.obs, '$.b') THEN 'true' ELSE 'false' END),
             'bootstrap_op', (SELECT name FROM journal_names WHERE field = 'bootstrap_op'
                              AND code = COALESCE(json_extract(r.obs, '$.op'), 0)),
             'bootstrap_phase', COALESCE(json_extract(r.obs, '$.ph'), ''),
             'bootstrap_started_at_ms', json_extract(r.obs, '$.bs'),
             'fence_uid', CASE json_type(r.obs, '$.fu')
                            WHEN 'integer' THEN COALESCE(json_extract(r.obs, '$.wf.u'), '')
                            ELSE json_extract(r.obs, '$.fu') END,
             'fence_generation', json_extract(r.obs, '$.fg'),
             'workload_uid', CASE json_type(r.obs, '$.wu')
                               WHEN 'integer' THEN COALESCE(json_extract(r.obs, '$.wp.u'), '')
                               ELSE json_extract(r.obs, '$.wu') END,
             'supervisor_uid', CASE json_type(r.obs, '$.su')
                                 WHEN 'integer' THEN COALESCE(json_extract(r.obs, '$.sp.u'), '')
                                 ELSE json_extract(r.obs, '$.su') END),
           'workload_fence', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.wf.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.wf.u'), ''),
             'generation', COALESCE(json_extract(r.obs, '$.wf.g'), 0),
             'intact', json(CASE WHEN json_extract(r.obs, '$.wf.i') THEN 'true' ELSE 'false' END)),
           'supervisor_fence', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.sf.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.sf.u'), ''),
             'generation', COALESCE(json_extract(r.obs, '$.sf.g'), 0),
             'intact', json(CASE WHEN json_extract(r.obs, '$.sf.i') THEN 'true' ELSE 'false' END)),
           'workload_pod', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.wp.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.wp.u'), ''),
             'scheduling_gated',
               json(CASE WHEN json_extract(r.obs, '$.wp.s') THEN 'true' ELSE 'false' END)),
           'supervisor_pod', json_object(
             'present', json(CASE WHEN json_extract(r.obs, '$.sp.p') THEN 'true' ELSE 'false' END),
             'uid', COALESCE(json_extract(r.obs, '$.sp.u'), ''),
             'scheduling_gated',
               json(CASE WHEN json_extract(r.obs, '$.sp.s') THEN 'true' ELSE 'false' END)),
           'history', json_object(
             'pending_intent_seq', json_extract(r.obs, '$.hp'),
             'applied_generation', json_extract(r.obs, '$.ha')),
           'observed_at_ms', r.at + COALESCE(json_extract(r.obs, '$.t'), 0))
         WHEN 'decided' THEN json_object(
           'verdict', (SELECT name FROM journal_names WHERE field = 'verdict'
                       AND code = json_extract(r.body, '$.d[0]')),
           'reason', (SELECT name FROM journal_names WHERE field = 'reason'
                      AND code = json_extract(r.body, '$.d[1]')),
           'action', (SELECT name FROM journal_names WHERE field = 'action'
                      AND code = json_extract(r.body, '$.d[2]')),
           'note', COALESCE(json_extract(r.body, '$.d[3]'), ''),
           'reevaluate_at_ms', json_extract(r.body, '$.d[4]'))
         WHEN 'suspend_intent' THEN json_object(
           'action', 'suspend',
           'reason', (SELECT name FROM journal_names WHERE field = 'reason'
                      AND code = COALESCE(json_extract(r.body, '$.i.r'),
                                          json_extract(r.body, '$.d[1]'), 0)),
           'observed_generation', COALESCE(json_extract(r.body, '$.i.g'),
                                           CASE WHEN r.kind = 9
                                                THEN COALESCE(json_extract(r.obs, '$.g'), 0) END,
                                           0),
           'resource_version', COALESCE(json_extract(r.body, '$.i.rv'), ''),
           'api_version', (SELECT name FROM journal_names WHERE field = 'api_version'
                           AND code = COALESCE(json_extract(r.body, '$.i.v'),
                                               CASE WHEN r.kind = 9
                                                    THEN COALESCE(json_extract(r.obs, '$.v'), 0)
                                               END, 0)),
           'note', COALESCE(json_extract(r.body, '$.i.n'),
                            CASE WHEN r.kind = 9
                                 THEN COALESCE(json_extract(r.body, '$.d[3]'), '') END, ''),
           'writer', COALESCE(json_extract(r.body, '$.i.w'), ''))
         WHEN 'suspend_outcome' THEN json_object(
           'outcome', (SELECT name FROM journal_names WHERE field = 'outcome'
                       AND code = json_extract(r.body, '$[0]')),
           'applied_generation', json_extract(r.body, '$[1]'),
           'detail', COALESCE(json_extract(r.body, '$[2]'), ''))
         WHEN 'leadership' THEN json_object(
           'identity', json_extract(r.body, '$[0]'),
           'state', json_extract(r.body, '$[1]'))
         WHEN 'forgotten' THEN json_object(
           'detail', COALESCE(json_extract(r.body, '$[0]'), ''))
         WHEN 'pruned' THEN json_object(
           'first_seq', json_extract(r.body, '$.f'),
           'last_seq', json_extract(r.body, '$.l'),
           'rows', json_extract(r.body, '$.n'),
           'first_at', strftime('%Y-%m-%dT%H:%M:%S', json_extract(r.body, '$.fa') / 1000, 'unixepoch') ||
             printf('.%03dZ', json_extract(r.body, '$.fa') % 1000),
           'last_at', strftime('%Y-%m-%dT%H:%M:%S', json_extract(r.body, '$.la') / 1000, 'unixepoch') ||
             printf('.%03dZ', json_extract(r.body, '$.la') % 1000),
           'head_seq', json_extract(r.body, '$.hs'),
           'head_hash', json_extract(r.body, '$.h'),
           'archive', COALESCE(json_extract(r.body, '$.a'), ''))
       END AS payload
FROM journal_rows AS r
JOIN journal_kinds AS k ON k.kind = r.kind;
COMMIT;
PRAGMA application_id = 1179339313;
PRAGMA user_version = 7;
