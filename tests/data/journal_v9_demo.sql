-- A schema-9 journal as fencekeeper f3476ff (the last landed before schema 10) wrote it:
-- `fencekeeper demo` (the upstream incident, three suspends, a restart), dumped with sqlite3
-- .dump; its hashes are 64 hex digits in a TEXT column, `journal verify` printed
-- head 72:9f50aeee16b7e2f33c98c6916ea9691990f25378e6619e782a0226bf1694b1b4.
-- tests/compact_journal_test.cc upgrades it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
) STRICT;
INSERT INTO schema_migrations VALUES(1,'0001_init','2026-12-07T10:21:44.474Z');
INSERT INTO schema_migrations VALUES(2,'0002_leadership_view','2026-12-07T10:21:44.485Z');
INSERT INTO schema_migrations VALUES(3,'0003_growth_bounds','2026-12-07T10:21:44.493Z');
INSERT INTO schema_migrations VALUES(4,'0004_writer_id','2026-12-07T10:21:44.497Z');
INSERT INTO schema_migrations VALUES(5,'0005_compact_journal','2026-12-07T10:21:44.513Z');
INSERT INTO schema_migrations VALUES(6,'0006_hash_chain','2026-12-07T10:21:44.518Z');
INSERT INTO schema_migrations VALUES(7,'0007_retention','2026-12-07T10:21:44.522Z');
INSERT INTO schema_migrations VALUES(8,'0008_writer_starts','2026-12-07T10:21:44.524Z');
INSERT INTO schema_migrations VALUES(9,'0009_fence_bypasses','2026-12-07T10:21:44.530Z');
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
INSERT INTO subjects VALUES(3,'openshell-agents','active-1','99a181df-5e3d-4000-8000-000000000014','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"735fc36b-5e3d-4000-8000-000000000012"},"sp":{"p":1,"u":"ec1317ac-5e3d-4000-8000-000000000013"}}');
INSERT INTO subjects VALUES(4,'openshell-agents','active-2','d50ef1e0-5e3d-4000-8000-000000000017','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"c5eb1bed-5e3d-4000-8000-000000000015"},"sp":{"p":1,"u":"427e7da2-5e3d-4000-8000-000000000016"}}');
INSERT INTO subjects VALUES(5,'openshell-agents','active-3','9ef2deb0-5e3d-4000-8000-00000000001a','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"331f9dfd-5e3d-4000-8000-000000000018"},"sp":{"p":1,"u":"5f163266-5e3d-4000-8000-000000000019"}}');
INSERT INTO subjects VALUES(6,'openshell-agents','stopped-1','6ef85a26-5e3d-4000-8000-000000000005','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-1","su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"767655ea-5e3d-4000-8000-000000000004"}}');
INSERT INTO subjects VALUES(7,'openshell-agents','stopped-2','1e67c972-5e3d-4000-8000-000000000007','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-2","su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"9a79c249-5e3d-4000-8000-000000000006"}}');
INSERT INTO subjects VALUES(8,'openshell-agents','stopped-3','a1dff3fc-5e3d-4000-8000-000000000009','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-3","su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"be92c314-5e3d-4000-8000-000000000008"}}');
INSERT INTO subjects VALUES(9,'openshell-agents','stopped-4','2779a78b-5e3d-4000-8000-00000000000b','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-4","su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"1fbc6c45-5e3d-4000-8000-00000000000a"}}');
INSERT INTO subjects VALUES(10,'openshell-agents','stopped-5','534fc485-5e3d-4000-8000-00000000000d','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-5","su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"dd67a7ff-5e3d-4000-8000-00000000000c"}}');
INSERT INTO subjects VALUES(11,'openshell-agents','stopped-6','0be233b0-5e3d-4000-8000-00000000000f','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-6","su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"14ca381d-5e3d-4000-8000-00000000000e"}}');
INSERT INTO subjects VALUES(12,'openshell-agents','stopped-7','ee43b825-5e3d-4000-8000-000000000011','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-7","su":1,"wf":{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"12eeb0ac-5e3d-4000-8000-000000000010"}}');
INSERT INTO subjects VALUES(13,'team-healthy','openshell-sandbox-workloads','',NULL);
INSERT INTO subjects VALUES(14,'team-healthy','openshell-sandbox-supervisors','',NULL);
INSERT INTO subjects VALUES(15,'team-healthy','healthy-1','eaeb5f5d-5e3d-4000-8000-000000000020','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b11dc6a7-5e3d-4000-8000-00000000001c","g":1,"i":1},"sf":{"p":1,"u":"f6165d5b-5e3d-4000-8000-00000000001d","g":1,"i":1},"wp":{"p":1,"u":"5ef54224-5e3d-4000-8000-00000000001e"},"sp":{"p":1,"u":"f42e689c-5e3d-4000-8000-00000000001f"}}');
INSERT INTO subjects VALUES(16,'team-healthy','healthy-2','f7325485-5e3d-4000-8000-000000000023','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b11dc6a7-5e3d-4000-8000-00000000001c","g":1,"i":1},"sf":{"p":1,"u":"f6165d5b-5e3d-4000-8000-00000000001d","g":1,"i":1},"wp":{"p":1,"u":"ea664da0-5e3d-4000-8000-000000000021"},"sp":{"p":1,"u":"580465ec-5e3d-4000-8000-000000000022"}}');
CREATE TABLE journal (
  seq     INTEGER PRIMARY KEY,              -- the seq of the row's first event
  at      INTEGER NOT NULL,                 -- recorded_at: ms since the epoch, UTC
  kind    INTEGER NOT NULL,                 -- journal_kinds.kind
  subject INTEGER NOT NULL REFERENCES subjects (id),
  ref     INTEGER,                          -- suspend_outcome: the seq of its intent
  body    TEXT    NOT NULL CHECK (json_valid(body))
, hash TEXT
  CHECK (hash IS NULL OR (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'))) STRICT;
INSERT INTO journal VALUES(1,1796638904577,1,1,NULL,'{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":1,"i":1}','88cdf3dc565e36710855a36e1c8c54ba5f8a37662dfeb3f0e559460b24c3da9e');
INSERT INTO journal VALUES(2,1796638904577,1,2,NULL,'{"p":1,"u":"69d3a378-5e3d-4000-8000-000000000003","g":1,"i":1}','0beee3cfbe1f92d26dc5805330dfc70f98c8118a710603fecf637b6c2b0c852f');
INSERT INTO journal VALUES(3,1796638904577,8,3,NULL,'{"o":{},"d":[3,0,0]}','61e392c09f7f749e0d489980f7be850008d4f57bfc5548bb669724634a74f438');
INSERT INTO journal VALUES(5,1796638904583,8,4,NULL,'{"o":{},"d":[3,0,0]}','81701979a6aa5a4409b5b9d0a836659df9146a49bd4b7e5a0375422938b15aa1');
INSERT INTO journal VALUES(7,1796638904589,8,5,NULL,'{"o":{},"d":[3,0,0]}','5dec3d250ee01ba16a172eb6c2792dfd5ba99c1874fc97fa8e60d5d08dd3e392');
INSERT INTO journal VALUES(9,1796638904597,8,6,NULL,'{"o":{},"d":[3,0,0]}','cea0c517479e61d882a109ce8d540091c08f86e9f7ddcfe9c9f4ff2698f0fd34');
INSERT INTO journal VALUES(11,1796638904605,8,7,NULL,'{"o":{},"d":[3,0,0]}','9d7b3df433fbeea394d25860cb5bf1ca2d5d6477b4cd8b16f578db3108c66b34');
INSERT INTO journal VALUES(13,1796638904607,8,8,NULL,'{"o":{},"d":[3,0,0]}','1de207ef9a492f32e116f6bf55bf2f8d8fd00deadd6f269f581023188afe7615');
INSERT INTO journal VALUES(15,1796638904609,8,9,NULL,'{"o":{},"d":[3,0,0]}','ce0b7197cb73fcb11c4c7007686daebf76d131ed82e97a2e1c605f7cb371f9ff');
INSERT INTO journal VALUES(17,1796638904617,8,10,NULL,'{"o":{},"d":[3,0,0]}','43271bfc1c60a28fb0637e1c7cf8a91463cc6a32d0272d6e66943982bfb7f041');
INSERT INTO journal VALUES(19,1796638904621,8,11,NULL,'{"o":{},"d":[3,0,0]}','585a6dd37564977d3a61d3f1ac0653b5124104c1e4ebc1b9d0f47a95ee16c6de');
INSERT INTO journal VALUES(21,1796638904624,8,12,NULL,'{"o":{},"d":[3,0,0]}','88c5f53a1e15a48e958ae58e2984a42a5d9d6907d3ab0f6328324cb002524910');
INSERT INTO journal VALUES(23,1796638904627,1,13,NULL,'{"p":1,"u":"b11dc6a7-5e3d-4000-8000-00000000001c","g":1,"i":1}','61a420fb836e8bf583188706a5b352b0f8c2149bfe06875077f29fa160a6f230');
INSERT INTO journal VALUES(24,1796638904627,1,14,NULL,'{"p":1,"u":"f6165d5b-5e3d-4000-8000-00000000001d","g":1,"i":1}','d498b1165fbd8d487968dc7ddaec4398d6395db55cdf9065234b49a34a2816f4');
INSERT INTO journal VALUES(25,1796638904627,8,15,NULL,'{"o":{},"d":[3,0,0]}','d189b00da952726652e304c81afcc3078541e30d222e1eed0688c63c37aa08ee');
INSERT INTO journal VALUES(27,1796638904637,8,16,NULL,'{"o":{},"d":[3,0,0]}','25cf9b78468a4f4e36b367ebf61d0fcf6ffe1d6ddca9f890280712e63629dc19');
INSERT INTO journal VALUES(29,1796638904786,1,1,NULL,'{"p":1,"u":"c03f8535-5e3d-4000-8000-000000000002","g":2,"i":1}','4916954424d12cc6acb73a817a1b1a427ffa2ad51b6f241fb611de02cd34ff5b');
INSERT INTO journal VALUES(30,1796638904786,9,3,NULL,'{"o":{"wf":{"g":2}},"d":[1,3,1,"fence generation 1 -> 2"],"i":{"rv":"29","w":"eea8dee8a293cbbfab91e462f265900f"}}','736aa119cc52aa4761461011e8982cb5538945681277f55e7d31efd950a2af70');
INSERT INTO journal VALUES(33,1796638904793,5,3,32,'[1,2]','bab82a37e6b070605629830177fe502d62f15a0151142037d45cbcb61788ae4b');
INSERT INTO journal VALUES(34,1796638904793,8,3,NULL,'{"o":{"g":2,"wf":{"g":2},"ha":2,"r":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','b1129b5d3a31d0275a9325e04775b285f1d757bdfcd0f34fdf475010a6ca4b81');
INSERT INTO journal VALUES(36,1796638904797,9,4,NULL,'{"o":{"wf":{"g":2}},"d":[1,3,1,"fence generation 1 -> 2"],"i":{"rv":"33","w":"eea8dee8a293cbbfab91e462f265900f"}}','527021223ad3568541704258b97bb4df935d9200127dbf1536d70382c2c681c3');
INSERT INTO journal VALUES(39,1796638904798,5,4,38,'[1,2]','7dada4bb0c2aa15ff258e83e84033cdc40bb32da85891e9048a245a96abeb91f');
INSERT INTO journal VALUES(40,1796638904798,8,4,NULL,'{"o":{"g":2,"wf":{"g":2},"ha":2,"r":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','134bf9e41e33227801de5a259cd555a81bb1836790831c74c5d7286e1abb6c7a');
INSERT INTO journal VALUES(42,1796638904800,9,5,NULL,'{"o":{"wf":{"g":2}},"d":[1,3,1,"fence generation 1 -> 2"],"i":{"rv":"37","w":"eea8dee8a293cbbfab91e462f265900f"}}','ba74fd695406146ad4ce6529c940329b1a00faa9d3d889135f36abfa2105e6e3');
INSERT INTO journal VALUES(45,1796638904801,5,5,44,'[1,2]','a5cf42cd06fed38069d1d2f390168b1db69493f2a68f71949d43a2877c43526b');
INSERT INTO journal VALUES(46,1796638904801,8,5,NULL,'{"o":{"g":2,"wf":{"g":2},"ha":2,"r":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','c398a7a7a18a1ddce4c2586edf39983db0826e684f87cf63f67fe0f82a175ee4');
INSERT INTO journal VALUES(48,1796638904802,8,6,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','a45b5e5f432f19ce8005f497ceb3df59a69965db4a17828307fcd69704767343');
INSERT INTO journal VALUES(50,1796638904803,8,7,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','89fd1f7cc842d82cac544cd5c1d555be1651427bae81fce00a306fefba4de61c');
INSERT INTO journal VALUES(52,1796638904804,8,8,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','e90099e2aebd301aecf034264233b2ae3b63f621dfb6c8c4bd026dc1c5432466');
INSERT INTO journal VALUES(54,1796638904805,8,9,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','a2d6e75db63a020a779effedcd7bc8c45e4d4c6d9690b39cce0a4765634ffe69');
INSERT INTO journal VALUES(56,1796638904808,8,10,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','6295affd594043cfae00afe42029719b16e81e7d2714971135879bf395805811');
INSERT INTO journal VALUES(58,1796638904864,8,11,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','5d6c973a3125ec2866d03abbb6d85edde2691091830b5422d5d6943638eb2e85');
INSERT INTO journal VALUES(60,1796638904865,8,12,NULL,'{"o":{"wf":{"g":2}},"d":[2,3,0,"already fail-closed; fence generation 1 -> 2"]}','bf8b67701511e6cf4a974588edd7151b4498c6e6677b159913ee4b4d065cb652');
INSERT INTO journal VALUES(62,1796638909254,9,15,NULL,'{"o":{"bp":[["allow-dns","a991277f-5e3d-4000-8000-00000000002e",1,1]],"t":-1},"d":[1,6,1,"fence bypassed: NetworkPolicy allow-dns widens egress"],"i":{"rv":"44","w":"70fae7b287a72be805169627e825fc36"}}','194077dc2687278f1b17c1c99a9308c89e8fcb8220a2814a1db97a0feeade3c0');
INSERT INTO journal VALUES(65,1796638909257,5,15,64,'[1,2]','9d42c0b39fa8f41d28ccb68b48a68c9095d3d858518d23764ff2c24ee78b155e');
INSERT INTO journal VALUES(66,1796638909257,8,15,NULL,'{"o":{"g":2,"ha":2,"bp":[["allow-dns","a991277f-5e3d-4000-8000-00000000002e",1,1]],"r":null},"d":[2,6,0,"already fail-closed; fence bypassed: NetworkPolicy allow-dns widens egress"]}','c50b7864499ff112f14b7a3211c900498b959a9c3df704babbe88fcc2f662c6d');
INSERT INTO journal VALUES(68,1796638909258,9,16,NULL,'{"o":{"bp":[["allow-dns","a991277f-5e3d-4000-8000-00000000002e",1,1]],"t":-1},"d":[1,6,1,"fence bypassed: NetworkPolicy allow-dns widens egress"],"i":{"rv":"48","w":"70fae7b287a72be805169627e825fc36"}}','b5d5d9a7b8f2e40f5262a32f564483e7633cfc06938827f129238ddd8a3fda5a');
INSERT INTO journal VALUES(71,1796638909259,5,16,70,'[1,2]','cc579808c4f56f666a4a8d40da0d3479fedc4c3079f729f13e304058133a5feb');
INSERT INTO journal VALUES(72,1796638909259,8,16,NULL,'{"o":{"g":2,"wu":"ea664da0-5e3d-4000-8000-000000000021","ha":2,"bp":[["allow-dns","a991277f-5e3d-4000-8000-00000000002e",1,1]],"r":null,"wp":null},"d":[2,6,0,"already fail-closed; fence bypassed: NetworkPolicy allow-dns widens egress"]}','9f50aeee16b7e2f33c98c6916ea9691990f25378e6619e782a0226bf1694b1b4');
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
INSERT INTO journal_names VALUES('reason',6,'fence-bypassed');
INSERT INTO journal_names VALUES('verdict',0,'ignore');
INSERT INTO journal_names VALUES('verdict',1,'suspend');
INSERT INTO journal_names VALUES('verdict',2,'hold');
INSERT INTO journal_names VALUES('verdict',3,'healthy');
INSERT INTO journal_names VALUES('verdict',4,'admitting');
INSERT INTO journal_names VALUES('widens',0,'none');
INSERT INTO journal_names VALUES('widens',1,'egress');
INSERT INTO journal_names VALUES('widens',2,'ingress');
INSERT INTO journal_names VALUES('widens',3,'both');
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
INSERT INTO fence_projection VALUES('openshell-agents','openshell-sandbox-supervisors',1,'69d3a378-5e3d-4000-8000-000000000003',1,1,2,'2026-12-07T10:21:44.577Z',2);
INSERT INTO fence_projection VALUES('openshell-agents','openshell-sandbox-workloads',1,'c03f8535-5e3d-4000-8000-000000000002',2,1,29,'2026-12-07T10:21:44.786Z',1);
INSERT INTO fence_projection VALUES('team-healthy','openshell-sandbox-supervisors',1,'f6165d5b-5e3d-4000-8000-00000000001d',1,1,24,'2026-12-07T10:21:44.627Z',14);
INSERT INTO fence_projection VALUES('team-healthy','openshell-sandbox-workloads',1,'b11dc6a7-5e3d-4000-8000-00000000001c',1,1,23,'2026-12-07T10:21:44.627Z',13);
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
INSERT INTO sandbox_projection VALUES('99a181df-5e3d-4000-8000-000000000014','openshell-agents','active-1','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-1","uid":"99a181df-5e3d-4000-8000-000000000014","generation":2,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"735fc36b-5e3d-4000-8000-000000000012","supervisor_uid":"ec1317ac-5e3d-4000-8000-000000000013"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"735fc36b-5e3d-4000-8000-000000000012","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"ec1317ac-5e3d-4000-8000-000000000013","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"bypass":[],"observed_at_ms":1796638904793}',34,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',35,NULL,2,'2026-12-07T10:21:44.793Z',NULL,3);
INSERT INTO sandbox_projection VALUES('d50ef1e0-5e3d-4000-8000-000000000017','openshell-agents','active-2','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-2","uid":"d50ef1e0-5e3d-4000-8000-000000000017","generation":2,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"c5eb1bed-5e3d-4000-8000-000000000015","supervisor_uid":"427e7da2-5e3d-4000-8000-000000000016"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"c5eb1bed-5e3d-4000-8000-000000000015","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"427e7da2-5e3d-4000-8000-000000000016","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"bypass":[],"observed_at_ms":1796638904798}',40,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',41,NULL,2,'2026-12-07T10:21:44.798Z',NULL,4);
INSERT INTO sandbox_projection VALUES('9ef2deb0-5e3d-4000-8000-00000000001a','openshell-agents','active-3','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-3","uid":"9ef2deb0-5e3d-4000-8000-00000000001a","generation":2,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"331f9dfd-5e3d-4000-8000-000000000018","supervisor_uid":"5f163266-5e3d-4000-8000-000000000019"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"331f9dfd-5e3d-4000-8000-000000000018","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"5f163266-5e3d-4000-8000-000000000019","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"bypass":[],"observed_at_ms":1796638904801}',46,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',47,NULL,2,'2026-12-07T10:21:44.801Z',NULL,5);
INSERT INTO sandbox_projection VALUES('6ef85a26-5e3d-4000-8000-000000000005','openshell-agents','stopped-1','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-1","uid":"6ef85a26-5e3d-4000-8000-000000000005","generation":1,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-1","supervisor_uid":"767655ea-5e3d-4000-8000-000000000004"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"767655ea-5e3d-4000-8000-000000000004","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"bypass":[],"observed_at_ms":1796638904802}',48,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',49,NULL,NULL,'2026-12-07T10:21:44.802Z',NULL,6);
INSERT INTO sandbox_projection VALUES('1e67c972-5e3d-4000-8000-000000000007','openshell-agents','stopped-2','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-2","uid":"1e67c972-5e3d-4000-8000-000000000007","generation":1,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-2","supervisor_uid":"9a79c249-5e3d-4000-8000-000000000006"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"9a79c249-5e3d-4000-8000-000000000006","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"bypass":[],"observed_at_ms":1796638904803}',50,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',51,NULL,NULL,'2026-12-07T10:21:44.803Z',NULL,7);
INSERT INTO sandbox_projection VALUES('a1dff3fc-5e3d-4000-8000-000000000009','openshell-agents','stopped-3','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-3","uid":"a1dff3fc-5e3d-4000-8000-000000000009","generation":1,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-3","supervisor_uid":"be92c314-5e3d-4000-8000-000000000008"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"be92c314-5e3d-4000-8000-000000000008","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"bypass":[],"observed_at_ms":1796638904804}',52,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',53,NULL,NULL,'2026-12-07T10:21:44.804Z',NULL,8);
INSERT INTO sandbox_projection VALUES('2779a78b-5e3d-4000-8000-00000000000b','openshell-agents','stopped-4','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-4","uid":"2779a78b-5e3d-4000-8000-00000000000b","generation":1,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-4","supervisor_uid":"1fbc6c45-5e3d-4000-8000-00000000000a"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"1fbc6c45-5e3d-4000-8000-00000000000a","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"bypass":[],"observed_at_ms":1796638904805}',54,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',55,NULL,NULL,'2026-12-07T10:21:44.805Z',NULL,9);
INSERT INTO sandbox_projection VALUES('534fc485-5e3d-4000-8000-00000000000d','openshell-agents','stopped-5','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-5","uid":"534fc485-5e3d-4000-8000-00000000000d","generation":1,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-5","supervisor_uid":"dd67a7ff-5e3d-4000-8000-00000000000c"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"dd67a7ff-5e3d-4000-8000-00000000000c","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"bypass":[],"observed_at_ms":1796638904808}',56,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',57,NULL,NULL,'2026-12-07T10:21:44.808Z',NULL,10);
INSERT INTO sandbox_projection VALUES('0be233b0-5e3d-4000-8000-00000000000f','openshell-agents','stopped-6','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-6","uid":"0be233b0-5e3d-4000-8000-00000000000f","generation":1,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-6","supervisor_uid":"14ca381d-5e3d-4000-8000-00000000000e"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"14ca381d-5e3d-4000-8000-00000000000e","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"bypass":[],"observed_at_ms":1796638904864}',58,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',59,NULL,NULL,'2026-12-07T10:21:44.864Z',NULL,11);
INSERT INTO sandbox_projection VALUES('ee43b825-5e3d-4000-8000-000000000011','openshell-agents','stopped-7','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-7","uid":"ee43b825-5e3d-4000-8000-000000000011","generation":1,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"c03f8535-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-7","supervisor_uid":"12eeb0ac-5e3d-4000-8000-000000000010"},"workload_fence":{"present":true,"uid":"c03f8535-5e3d-4000-8000-000000000002","generation":2,"intact":true},"supervisor_fence":{"present":true,"uid":"69d3a378-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"12eeb0ac-5e3d-4000-8000-000000000010","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"bypass":[],"observed_at_ms":1796638904865}',60,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 2","reevaluate_at_ms":null}',61,NULL,NULL,'2026-12-07T10:21:44.865Z',NULL,12);
INSERT INTO sandbox_projection VALUES('eaeb5f5d-5e3d-4000-8000-000000000020','team-healthy','healthy-1','hold','fence-bypassed','none',2,'{"sandbox":{"namespace":"team-healthy","name":"healthy-1","uid":"eaeb5f5d-5e3d-4000-8000-000000000020","generation":2,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b11dc6a7-5e3d-4000-8000-00000000001c","fence_generation":1,"workload_uid":"5ef54224-5e3d-4000-8000-00000000001e","supervisor_uid":"f42e689c-5e3d-4000-8000-00000000001f"},"workload_fence":{"present":true,"uid":"b11dc6a7-5e3d-4000-8000-00000000001c","generation":1,"intact":true},"supervisor_fence":{"present":true,"uid":"f6165d5b-5e3d-4000-8000-00000000001d","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"5ef54224-5e3d-4000-8000-00000000001e","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"f42e689c-5e3d-4000-8000-00000000001f","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"bypass":[{"policy":"allow-dns","uid":"a991277f-5e3d-4000-8000-00000000002e","generation":1,"widens":"egress"}],"observed_at_ms":1796638909257}',66,'{"verdict":"hold","reason":"fence-bypassed","action":"none","note":"already fail-closed; fence bypassed: NetworkPolicy allow-dns widens egress","reevaluate_at_ms":null}',67,NULL,2,'2026-12-07T10:21:49.257Z',NULL,15);
INSERT INTO sandbox_projection VALUES('f7325485-5e3d-4000-8000-000000000023','team-healthy','healthy-2','hold','fence-bypassed','none',2,'{"sandbox":{"namespace":"team-healthy","name":"healthy-2","uid":"f7325485-5e3d-4000-8000-000000000023","generation":2,"api_version":"v1beta1","deleting":false,"spare":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b11dc6a7-5e3d-4000-8000-00000000001c","fence_generation":1,"workload_uid":"ea664da0-5e3d-4000-8000-000000000021","supervisor_uid":"580465ec-5e3d-4000-8000-000000000022"},"workload_fence":{"present":true,"uid":"b11dc6a7-5e3d-4000-8000-00000000001c","generation":1,"intact":true},"supervisor_fence":{"present":true,"uid":"f6165d5b-5e3d-4000-8000-00000000001d","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"580465ec-5e3d-4000-8000-000000000022","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"bypass":[{"policy":"allow-dns","uid":"a991277f-5e3d-4000-8000-00000000002e","generation":1,"widens":"egress"}],"observed_at_ms":1796638909259}',72,'{"verdict":"hold","reason":"fence-bypassed","action":"none","note":"already fail-closed; fence bypassed: NetworkPolicy allow-dns widens egress","reevaluate_at_ms":null}',73,NULL,2,'2026-12-07T10:21:49.259Z',NULL,16);
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
CREATE TABLE writer_starts (
  start      INTEGER PRIMARY KEY,   -- the starts in order
  first_seq  INTEGER NOT NULL,      -- the first seq this writer may append
  writer     TEXT    NOT NULL,      -- the writer id (docs/transitions.md#the-writer-id)
  started_at TEXT    NOT NULL       -- RFC 3339 UTC
) STRICT;
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
CREATE INDEX writer_starts_seq ON writer_starts (first_seq);
CREATE TRIGGER writer_starts_append_only_update BEFORE UPDATE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
END;
CREATE TRIGGER writer_starts_append_only_delete BEFORE DELETE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
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
             'spare', json(CASE WHEN json_extract(r.obs, '$.s') THEN 'true' ELSE 'false' END),
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
           'bypass', CASE WHEN json_type(r.obs, '$.bp') IS NULL THEN json_array() ELSE json(
             (SELECT json_group_array(json_object(
                       'policy', json_extract(p.value, '$[0]'),
                       'uid', json_extract(p.value, '$[1]'),
                       'generation', json_extract(p.value, '$[2]'),
                       'widens', (SELECT name FROM journal_names WHERE field = 'widens'
                                  AND code = json_extract(p.value, '$[3]'))))
              FROM json_each(r.obs, '$.bp') AS p)) END,
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
CREATE VIEW fence_bypasses AS
SELECT o.seq                                                          AS seq,
       strftime('%Y-%m-%dT%H:%M:%S', o.at / 1000, 'unixepoch') ||
         printf('.%03dZ', o.at % 1000)                                AS recorded_at,
       s.namespace                                                    AS namespace,
       s.name                                                         AS sandbox,
       s.uid                                                          AS sandbox_uid,
       json_extract(p.value, '$[0]')                                  AS policy,
       json_extract(p.value, '$[1]')                                  AS policy_uid,
       json_extract(p.value, '$[2]')                                  AS policy_generation,
       (SELECT name FROM journal_names WHERE field = 'widens'
        AND code = json_extract(p.value, '$[3]'))                     AS widens
FROM (SELECT j.seq, j.at, j.subject,
             json_extract(json_patch(COALESCE(b.base, '{}'), json_extract(j.body, '$.o')),
                          '$.bp') AS bp,
             (SELECT json_extract(json_patch(COALESCE(b.base, '{}'), json_extract(prev.body, '$.o')),
                                  '$.bp')
              FROM journal AS prev
              WHERE prev.subject = j.subject AND prev.seq < j.seq AND prev.kind IN (2, 8, 9)
              ORDER BY prev.seq DESC LIMIT 1) AS was
      FROM journal AS j
      JOIN subjects AS b ON b.id = j.subject
      WHERE j.kind IN (2, 8, 9)) AS o
JOIN subjects AS s ON s.id = o.subject
JOIN json_each(o.bp) AS p
WHERE o.bp IS NOT NULL AND o.bp IS NOT o.was;
COMMIT;
PRAGMA application_id = 1179339313;
PRAGMA user_version = 9;
