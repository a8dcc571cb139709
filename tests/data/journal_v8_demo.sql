-- A schema-8 journal as fencekeeper 53f142f (the last landed before schema 9) wrote it:
-- `fencekeeper run` against `fencekeeper sim --scenario incident-3525`, the rehearsal of
-- docs/operations.md (the fence altered: three suspends; restored; stopped-1 resumed by
-- OpenShell's flow: admitting, healthy), then a second start of `run` during which
-- team-healthy/healthy-1 was deleted (an intent superseded, forgotten). Two writer starts,
-- every row chained. Dumped with sqlite3 .dump. tests/compact_journal_test.cc upgrades it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
) STRICT;
INSERT INTO schema_migrations VALUES(1,'0001_init','2026-12-07T05:16:59.343Z');
INSERT INTO schema_migrations VALUES(2,'0002_leadership_view','2026-12-07T05:16:59.397Z');
INSERT INTO schema_migrations VALUES(3,'0003_growth_bounds','2026-12-07T05:16:59.401Z');
INSERT INTO schema_migrations VALUES(4,'0004_writer_id','2026-12-07T05:16:59.405Z');
INSERT INTO schema_migrations VALUES(5,'0005_compact_journal','2026-12-07T05:16:59.429Z');
INSERT INTO schema_migrations VALUES(6,'0006_hash_chain','2026-12-07T05:16:59.434Z');
INSERT INTO schema_migrations VALUES(7,'0007_retention','2026-12-07T05:16:59.439Z');
INSERT INTO schema_migrations VALUES(8,'0008_writer_starts','2026-12-07T05:16:59.454Z');
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
INSERT INTO subjects VALUES(3,'openshell-agents','active-1','f836e225-5e3d-4000-8000-000000000014','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"4b1c68b1-5e3d-4000-8000-000000000012"},"sp":{"p":1,"u":"238518f2-5e3d-4000-8000-000000000013"}}');
INSERT INTO subjects VALUES(4,'openshell-agents','active-2','babc6cf2-5e3d-4000-8000-000000000017','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"07274e26-5e3d-4000-8000-000000000015"},"sp":{"p":1,"u":"a063da3e-5e3d-4000-8000-000000000016"},"t":-10}');
INSERT INTO subjects VALUES(5,'openshell-agents','active-3','637d483a-5e3d-4000-8000-00000000001a','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"wp":{"p":1,"u":"64de293c-5e3d-4000-8000-000000000018"},"sp":{"p":1,"u":"64e87353-5e3d-4000-8000-000000000019"},"t":-10}');
INSERT INTO subjects VALUES(6,'openshell-agents','stopped-1','a4834a51-5e3d-4000-8000-000000000005','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-1","su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"277a3184-5e3d-4000-8000-000000000004"},"t":-10}');
INSERT INTO subjects VALUES(7,'openshell-agents','stopped-2','38874a8a-5e3d-4000-8000-000000000007','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-2","su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"b3d7e2fb-5e3d-4000-8000-000000000006"},"t":-10}');
INSERT INTO subjects VALUES(8,'openshell-agents','stopped-3','32b0c414-5e3d-4000-8000-000000000009','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-3","su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"4fc33c7e-5e3d-4000-8000-000000000008"},"t":-10}');
INSERT INTO subjects VALUES(9,'openshell-agents','stopped-4','9e24db13-5e3d-4000-8000-00000000000b','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-4","su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"b83b3d9f-5e3d-4000-8000-00000000000a"},"t":-10}');
INSERT INTO subjects VALUES(10,'openshell-agents','stopped-5','40754f08-5e3d-4000-8000-00000000000d','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-5","su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"05c50d85-5e3d-4000-8000-00000000000c"},"t":-10}');
INSERT INTO subjects VALUES(11,'openshell-agents','stopped-6','b187d674-5e3d-4000-8000-00000000000f','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-6","su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"395d1fe6-5e3d-4000-8000-00000000000e"},"t":-10}');
INSERT INTO subjects VALUES(12,'openshell-agents','stopped-7','3fd8e90e-5e3d-4000-8000-000000000011','{"g":1,"fu":1,"fg":1,"wu":"gone-stopped-7","su":1,"wf":{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1},"sf":{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1},"sp":{"p":1,"u":"74c54373-5e3d-4000-8000-000000000010"},"t":-2}');
INSERT INTO subjects VALUES(13,'team-healthy','openshell-sandbox-workloads','',NULL);
INSERT INTO subjects VALUES(14,'team-healthy','openshell-sandbox-supervisors','',NULL);
INSERT INTO subjects VALUES(15,'team-healthy','healthy-1','f3fe5a6a-5e3d-4000-8000-000000000020','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"cc66117f-5e3d-4000-8000-00000000001c","g":1,"i":1},"sf":{"p":1,"u":"6413038c-5e3d-4000-8000-00000000001d","g":1,"i":1},"wp":{"p":1,"u":"859c1571-5e3d-4000-8000-00000000001e"},"sp":{"p":1,"u":"a28cc841-5e3d-4000-8000-00000000001f"}}');
INSERT INTO subjects VALUES(16,'team-healthy','healthy-2','75d2163a-5e3d-4000-8000-000000000023','{"g":1,"r":1,"fu":1,"fg":1,"wu":1,"su":1,"wf":{"p":1,"u":"cc66117f-5e3d-4000-8000-00000000001c","g":1,"i":1},"sf":{"p":1,"u":"6413038c-5e3d-4000-8000-00000000001d","g":1,"i":1},"wp":{"p":1,"u":"0a29e2ac-5e3d-4000-8000-000000000021"},"sp":{"p":1,"u":"0bff360b-5e3d-4000-8000-000000000022"},"t":-40}');
CREATE TABLE journal (
  seq     INTEGER PRIMARY KEY,              -- the seq of the row's first event
  at      INTEGER NOT NULL,                 -- recorded_at: ms since the epoch, UTC
  kind    INTEGER NOT NULL,                 -- journal_kinds.kind
  subject INTEGER NOT NULL REFERENCES subjects (id),
  ref     INTEGER,                          -- suspend_outcome: the seq of its intent
  body    TEXT    NOT NULL CHECK (json_valid(body))
, hash TEXT
  CHECK (hash IS NULL OR (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'))) STRICT;
INSERT INTO journal VALUES(1,1796620619603,1,1,NULL,'{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":1,"i":1}','9329b02abca4d450e8b157a5e2a179d4cd995c6103867e4bfe79a42a24656bf8');
INSERT INTO journal VALUES(2,1796620619603,1,2,NULL,'{"p":1,"u":"46251f5b-5e3d-4000-8000-000000000003","g":1,"i":1}','44cbcda7859919ceba85ce3a100081681766d673a47d943c40fdc4ba3a20a2cb');
INSERT INTO journal VALUES(3,1796620619603,8,3,NULL,'{"o":{},"d":[3,0,0]}','efacdadfa78bb5a79b4c9eabaa70d5c03fb1b905cb453aa2d9a4670e846fff89');
INSERT INTO journal VALUES(5,1796620619615,8,4,NULL,'{"o":{},"d":[3,0,0]}','9b35e52b146a9784797c2a4108eeb10a1419c5dce0839ec24e317bf98d155b05');
INSERT INTO journal VALUES(7,1796620619615,8,5,NULL,'{"o":{},"d":[3,0,0]}','016f745df37f6adc10fa7e7f6dbac535eae529c127e10d6ec56232a5624eb9f5');
INSERT INTO journal VALUES(9,1796620619615,8,6,NULL,'{"o":{},"d":[3,0,0]}','6247a1f7cbb9a49026bd2de714904513f6b2cb926e3de6a3d935c69e96da7cf1');
INSERT INTO journal VALUES(11,1796620619615,8,7,NULL,'{"o":{},"d":[3,0,0]}','b6926244208015ffa997fb2d498234a678bf2ea8caa3e5c364134d8bfbdc4338');
INSERT INTO journal VALUES(13,1796620619615,8,8,NULL,'{"o":{},"d":[3,0,0]}','06af51991b924c47a94f48c1478826b9303045eee0abc0fa2febafe78bd67def');
INSERT INTO journal VALUES(15,1796620619615,8,9,NULL,'{"o":{},"d":[3,0,0]}','51eeb66135c3d2888ec015958a23c6c35ccc62f832eba155cfc025e6c26e021a');
INSERT INTO journal VALUES(17,1796620619615,8,10,NULL,'{"o":{},"d":[3,0,0]}','8a98cce5dbc2a8576e48168306f34bd2aa1de878a17220dc1b6729e75910da0b');
INSERT INTO journal VALUES(19,1796620619615,8,11,NULL,'{"o":{},"d":[3,0,0]}','606f211d4dc608d15b3946e29a1ee94bb6a0134a24f809d580d681386b034f6b');
INSERT INTO journal VALUES(21,1796620619615,8,12,NULL,'{"o":{},"d":[3,0,0]}','87e0e2aedefb3b7ca0c7449c872b5eb91763cb9ed3c85225db9469d7069524ca');
INSERT INTO journal VALUES(23,1796620619617,1,13,NULL,'{"p":1,"u":"cc66117f-5e3d-4000-8000-00000000001c","g":1,"i":1}','9c6ea3c4a271bf9095d136a1ab0952a6e0746b3b6f429e988b50bf4c70f0d917');
INSERT INTO journal VALUES(24,1796620619617,1,14,NULL,'{"p":1,"u":"6413038c-5e3d-4000-8000-00000000001d","g":1,"i":1}','0467ca0ab19040517c41c84cbbe6fecf69303b446618d76a32b451d9268b96be');
INSERT INTO journal VALUES(25,1796620619617,8,15,NULL,'{"o":{},"d":[3,0,0]}','f309f6261d9b1e6fd4e0f42a9ace09c49285b316da6e5a4e96f9dd1c0f848574');
INSERT INTO journal VALUES(27,1796620619657,8,16,NULL,'{"o":{},"d":[3,0,0]}','6039457ddc56ba237d4ab15355a88af0ddd1562a2fb43ab472e9c5cab7832783');
INSERT INTO journal VALUES(29,1796620622233,1,1,NULL,'{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":2}','378c7b98085fa8a93c9102cbf8e6d91a36f491f6eb9b6e676593f4ed91946b1a');
INSERT INTO journal VALUES(30,1796620622233,8,6,NULL,'{"o":{"wf":{"g":2,"i":null},"t":null},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','b7ce2fa1bd185f5dc816d8cd97b3d8aaa0f1fd6581afb8376a4e4f497024b6b8');
INSERT INTO journal VALUES(32,1796620622273,8,7,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-39},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','d5f7e8df5bba44ec387496277517b014f6e560b68dd2aca4bde01d0d6d2f1245');
INSERT INTO journal VALUES(34,1796620622273,8,8,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-38},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','36e8cdcd071b9f151e867fc81898c495de2701a2d615194f230c6c3d2aa9a54d');
INSERT INTO journal VALUES(36,1796620622273,8,9,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-38},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','d8392bac590ee2656c37ffdabf4da90bef1df202bf350ecd390d32bd6d8a5de0');
INSERT INTO journal VALUES(38,1796620622273,8,10,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-38},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','ea3091c4a6f2ee88c03f39d9dffb9ed3437c18673f54d9a8fa999e9a0e76da32');
INSERT INTO journal VALUES(40,1796620622273,8,11,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-38},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','7cbd794596f631cf67a4b453996c19b2eed520c2c39e6a7cc662c5cf2c29ca4e');
INSERT INTO journal VALUES(42,1796620622273,8,12,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-38},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','ba32cf8e93cefc75e60266f44f296f1f0ed3dcee38cbbb34f258275b66c1ea4a');
INSERT INTO journal VALUES(44,1796620622273,9,3,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-40},"d":[1,2,1,"fence policy altered: openshell-sandbox-workloads"],"i":{"rv":"29","w":"3883aed009655f7faca9071cc0994518"}}','e9d40e3366b5b8ed3ea57200408365926e86b2a7f7c2e7a0ff60d7f1c94fd8a1');
INSERT INTO journal VALUES(47,1796620622273,9,4,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-40},"d":[1,2,1,"fence policy altered: openshell-sandbox-workloads"],"i":{"rv":"33","w":"3883aed009655f7faca9071cc0994518"}}','d48361ed0ab12217433ad50c890393c39b52550f90da89218aaaa7ab01ee6dc1');
INSERT INTO journal VALUES(50,1796620622273,9,5,NULL,'{"o":{"wf":{"g":2,"i":null},"t":-40},"d":[1,2,1,"fence policy altered: openshell-sandbox-workloads"],"i":{"rv":"37","w":"3883aed009655f7faca9071cc0994518"}}','72ba3c624ef9d4473325ee81f023f187fd14e0ee1549550eb34882b134034754');
INSERT INTO journal VALUES(53,1796620622353,5,4,49,'[1,2]','017dd29824f0c90f1b54f141ff84fece573467cbbf957ceecb4f6fd971e4e93d');
INSERT INTO journal VALUES(54,1796620622401,5,5,52,'[1,2]','cc71f8208f6ac46cf2cca2aa094e29125a8c38507cdaebc53494b6c7c71d137d');
INSERT INTO journal VALUES(55,1796620622401,5,3,46,'[1,2]','4e63dd335a96b0fe0bb67ff154a76063903f68864cced89d98395b2d96daaafa');
INSERT INTO journal VALUES(56,1796620622401,8,4,NULL,'{"o":{"g":2,"wu":"07274e26-5e3d-4000-8000-000000000015","wf":{"g":2,"i":null},"ha":2,"t":-8,"r":null,"wp":null},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','f16d196fb202c2dde3010da4a6f0ea4dc080e3f97c403fd0178330e10819c80c');
INSERT INTO journal VALUES(58,1796620622437,8,5,NULL,'{"o":{"g":2,"wu":"64de293c-5e3d-4000-8000-000000000018","wf":{"g":2,"i":null},"ha":2,"r":null,"wp":null,"t":null},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','feee1f707768bb0c78ace358238c758a798733eec0f82b5c1fe7b1919e5136c6');
INSERT INTO journal VALUES(60,1796620622439,8,3,NULL,'{"o":{"g":2,"wu":"4b1c68b1-5e3d-4000-8000-000000000012","wf":{"g":2,"i":null},"ha":2,"r":null,"wp":null},"d":[2,2,0,"already fail-closed; fence policy altered: openshell-sandbox-workloads"]}','061b4af5eed577055f387ba04c91bfe5a82dd0aa04425771ae6f75430604178f');
INSERT INTO journal VALUES(62,1796620625745,1,1,NULL,'{"p":1,"u":"b7c7b700-5e3d-4000-8000-000000000002","g":3,"i":1}','0310ae8c6910be7c422e1221e6f53c40b5ae4d1565fae74530e8afd2f6e2dd74');
INSERT INTO journal VALUES(63,1796620625745,8,3,NULL,'{"o":{"g":2,"wu":"4b1c68b1-5e3d-4000-8000-000000000012","wf":{"g":3},"ha":2,"r":null,"wp":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','e5847232b2c38ad8556984fc69ffa7a0df413b608223ed9f119814403b405238');
INSERT INTO journal VALUES(65,1796620625766,8,5,NULL,'{"o":{"g":2,"wu":"64de293c-5e3d-4000-8000-000000000018","wf":{"g":3},"ha":2,"t":-13,"r":null,"wp":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','57b26ac51368b8d7e4e8942efa21c2d33b754945869b6b624e21e677c2f797ce');
INSERT INTO journal VALUES(67,1796620625766,8,4,NULL,'{"o":{"g":2,"wu":"07274e26-5e3d-4000-8000-000000000015","wf":{"g":3},"ha":2,"t":-12,"r":null,"wp":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','ccf9d733ca53bd17ab844f171165281a3671618045e78def488ac34880d2623e');
INSERT INTO journal VALUES(69,1796620625766,8,6,NULL,'{"o":{"wf":{"g":3},"t":-12},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','cc8264fa8e7117e3e477a5ff22ef8cf458858a44a1ab22babe973e04cf3adcf0');
INSERT INTO journal VALUES(71,1796620625766,8,7,NULL,'{"o":{"wf":{"g":3},"t":-12},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','1797f60603e3a75adfbd04b8e5017f3198f15910b7665531a6b299e974f715b0');
INSERT INTO journal VALUES(73,1796620625766,8,8,NULL,'{"o":{"wf":{"g":3},"t":-12},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','eaa1785866e51a7ac53bed0eb10e4aeb85329a39758b1b33ba177b1993eddb82');
INSERT INTO journal VALUES(75,1796620625766,8,9,NULL,'{"o":{"wf":{"g":3},"t":-12},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','31879b18f270c27491e9795f0a74c5a7289262c59167059ab85f3b8aa9367b93');
INSERT INTO journal VALUES(77,1796620625766,8,10,NULL,'{"o":{"wf":{"g":3},"t":-12},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','ee143a10c10714ad182e28a417b1a4dad7127ea005fe512b1df5fc992791178d');
INSERT INTO journal VALUES(79,1796620625766,8,11,NULL,'{"o":{"wf":{"g":3},"t":-12},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','06926fab3aaaa2759a7f8c545a31c9604c0ed14cd90fa8e83c7f2bb0583b9b5a');
INSERT INTO journal VALUES(81,1796620625766,8,12,NULL,'{"o":{"wf":{"g":3},"t":-12},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','2d77e52d998cf5385010d802d921661419cc38066cdb7d208d87407f41324e7e');
INSERT INTO journal VALUES(83,1796620628797,8,6,NULL,'{"o":{"su":"277a3184-5e3d-4000-8000-000000000004","wf":{"g":3},"sp":null,"t":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','cbd6706ec688415630bae0729696d318ecfd271c81cc330b1baaf7e35ee3de03');
INSERT INTO journal VALUES(85,1796620628809,8,6,NULL,'{"o":{"su":"277a3184-5e3d-4000-8000-000000000004","wf":{"g":3},"sp":{"u":"9d8c0b82-5e3d-4000-8000-00000000002e"},"t":null},"d":[2,3,0,"already fail-closed; fence generation 1 -> 3"]}','df689459be57920b1477b46077cc20d0508403c18e2a57669f6286e223767b73');
INSERT INTO journal VALUES(87,1796620629098,8,6,NULL,'{"o":{"g":2,"r":1,"b":1,"op":2,"ph":"preparing","bs":1796620629097,"wf":{"g":3},"sp":{"u":"9d8c0b82-5e3d-4000-8000-00000000002e"},"t":null},"d":[4,0,0,"OpenShell is admitting the sandbox (restart, phase preparing, started 0 s ago, workload pod absent); re-evaluate at 1796620929097",1796620929097]}','bb56e6827db04687cd9aa7b9dd2d34d273b7de9b8abca0f2965671133e01e49d');
INSERT INTO journal VALUES(89,1796620629100,8,6,NULL,'{"o":{"g":2,"r":1,"b":1,"op":2,"ph":"preparing","bs":1796620629097,"wf":{"g":3},"wp":{"p":1,"u":"3b812268-5e3d-4000-8000-00000000002f","s":1},"sp":{"u":"9d8c0b82-5e3d-4000-8000-00000000002e"},"t":null},"d":[4,0,0,"OpenShell is admitting the sandbox (restart, phase preparing, started 0 s ago, workload pod gated); re-evaluate at 1796620929097",1796620929097]}','9688b48158ba3898740014a4a53ef46a819c3328468a92d41baec402c4facdd9');
INSERT INTO journal VALUES(91,1796620629399,8,6,NULL,'{"o":{"g":2,"r":1,"b":1,"op":2,"ph":"preparing","bs":1796620629097,"fg":3,"wu":1,"wf":{"g":3},"wp":{"p":1,"u":"3b812268-5e3d-4000-8000-00000000002f","s":1},"sp":{"u":"9d8c0b82-5e3d-4000-8000-00000000002e"},"t":null},"d":[4,0,0,"OpenShell is admitting the sandbox (restart, phase preparing, started 0 s ago, workload pod gated); re-evaluate at 1796620929097",1796620929097]}','ef40720b2b08dcde9a28cd2b92ab649d658e6ef08605b6420bcd6a9bd4987c05');
INSERT INTO journal VALUES(93,1796620629700,8,6,NULL,'{"o":{"g":2,"r":1,"b":1,"op":2,"ph":"preparing","bs":1796620629097,"fg":3,"wu":1,"wf":{"g":3},"wp":{"p":1,"u":"3b812268-5e3d-4000-8000-00000000002f"},"sp":{"u":"9d8c0b82-5e3d-4000-8000-00000000002e"},"t":null},"d":[3,0,0]}','3f3fe40837f3c4738f9c59279ed485ccc1bb629925ff07c10df69bef36d642de');
INSERT INTO journal VALUES(95,1796620630001,8,6,NULL,'{"o":{"g":2,"r":1,"b":1,"op":2,"ph":"released","bs":1796620629097,"fg":3,"wu":1,"wf":{"g":3},"wp":{"p":1,"u":"3b812268-5e3d-4000-8000-00000000002f"},"sp":{"u":"9d8c0b82-5e3d-4000-8000-00000000002e"},"t":null},"d":[3,0,0]}','bd0321f7d5af4302e83ac62c68e3946c7e6fb64562b5eeed569657725b3bdaef');
INSERT INTO journal VALUES(97,1796620630301,8,6,NULL,'{"o":{"g":2,"r":1,"fg":3,"wu":1,"wf":{"g":3},"wp":{"p":1,"u":"3b812268-5e3d-4000-8000-00000000002f"},"sp":{"u":"9d8c0b82-5e3d-4000-8000-00000000002e"},"t":null},"d":[3,0,0]}','16cfcc53c96bbbc40123d9eefdd26e3d5520dc408f08c274c929848712a785c2');
INSERT INTO journal VALUES(99,1796620641647,9,15,NULL,'{"o":{"wu":"859c1571-5e3d-4000-8000-00000000001e","t":-10,"wp":null},"d":[1,4,1,"workload pod missing, admitted with 859c1571-5e3d-4000-8000-00000000001e"],"i":{"rv":"44","w":"60add9d16ea3a97302b2828a7ae03e3f"}}','b67b926fb9d4c5567f06ce2027d087221d2471c9f09bc6c59a9918f8e44923b0');
INSERT INTO journal VALUES(102,1796620641665,5,15,101,'[4,null,"sandbox deleted before the PATCH"]','2d7f6a77946101b9d48bcae6901b933c66ebc186bfb45dbc48202b2afc7c5312');
INSERT INTO journal VALUES(103,1796620641669,7,15,NULL,'["deleted from the cluster"]','6f9ec4413ac334e856570cc53775e225f00b2efc6e0bf55dd328939a243b8371');
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
INSERT INTO fence_projection VALUES('openshell-agents','openshell-sandbox-supervisors',1,'46251f5b-5e3d-4000-8000-000000000003',1,1,2,'2026-12-07T05:16:59.603Z',2);
INSERT INTO fence_projection VALUES('openshell-agents','openshell-sandbox-workloads',1,'b7c7b700-5e3d-4000-8000-000000000002',3,1,62,'2026-12-07T05:17:05.745Z',1);
INSERT INTO fence_projection VALUES('team-healthy','openshell-sandbox-supervisors',1,'6413038c-5e3d-4000-8000-00000000001d',1,1,24,'2026-12-07T05:16:59.617Z',14);
INSERT INTO fence_projection VALUES('team-healthy','openshell-sandbox-workloads',1,'cc66117f-5e3d-4000-8000-00000000001c',1,1,23,'2026-12-07T05:16:59.617Z',13);
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
INSERT INTO sandbox_projection VALUES('f836e225-5e3d-4000-8000-000000000014','openshell-agents','active-1','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-1","uid":"f836e225-5e3d-4000-8000-000000000014","generation":2,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"4b1c68b1-5e3d-4000-8000-000000000012","supervisor_uid":"238518f2-5e3d-4000-8000-000000000013"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"238518f2-5e3d-4000-8000-000000000013","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"observed_at_ms":1796620625745}',63,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',64,NULL,2,'2026-12-07T05:17:05.745Z',NULL,3);
INSERT INTO sandbox_projection VALUES('32b0c414-5e3d-4000-8000-000000000009','openshell-agents','stopped-3','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-3","uid":"32b0c414-5e3d-4000-8000-000000000009","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-3","supervisor_uid":"4fc33c7e-5e3d-4000-8000-000000000008"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"4fc33c7e-5e3d-4000-8000-000000000008","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620625754}',73,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',74,NULL,NULL,'2026-12-07T05:17:05.766Z',NULL,8);
INSERT INTO sandbox_projection VALUES('38874a8a-5e3d-4000-8000-000000000007','openshell-agents','stopped-2','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-2","uid":"38874a8a-5e3d-4000-8000-000000000007","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-2","supervisor_uid":"b3d7e2fb-5e3d-4000-8000-000000000006"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"b3d7e2fb-5e3d-4000-8000-000000000006","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620625754}',71,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',72,NULL,NULL,'2026-12-07T05:17:05.766Z',NULL,7);
INSERT INTO sandbox_projection VALUES('3fd8e90e-5e3d-4000-8000-000000000011','openshell-agents','stopped-7','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-7","uid":"3fd8e90e-5e3d-4000-8000-000000000011","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-7","supervisor_uid":"74c54373-5e3d-4000-8000-000000000010"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"74c54373-5e3d-4000-8000-000000000010","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620625754}',81,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',82,NULL,NULL,'2026-12-07T05:17:05.766Z',NULL,12);
INSERT INTO sandbox_projection VALUES('40754f08-5e3d-4000-8000-00000000000d','openshell-agents','stopped-5','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-5","uid":"40754f08-5e3d-4000-8000-00000000000d","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-5","supervisor_uid":"05c50d85-5e3d-4000-8000-00000000000c"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"05c50d85-5e3d-4000-8000-00000000000c","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620625754}',77,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',78,NULL,NULL,'2026-12-07T05:17:05.766Z',NULL,10);
INSERT INTO sandbox_projection VALUES('637d483a-5e3d-4000-8000-00000000001a','openshell-agents','active-3','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-3","uid":"637d483a-5e3d-4000-8000-00000000001a","generation":2,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"64de293c-5e3d-4000-8000-000000000018","supervisor_uid":"64e87353-5e3d-4000-8000-000000000019"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"64e87353-5e3d-4000-8000-000000000019","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"observed_at_ms":1796620625753}',65,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',66,NULL,2,'2026-12-07T05:17:05.766Z',NULL,5);
INSERT INTO sandbox_projection VALUES('9e24db13-5e3d-4000-8000-00000000000b','openshell-agents','stopped-4','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-4","uid":"9e24db13-5e3d-4000-8000-00000000000b","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-4","supervisor_uid":"b83b3d9f-5e3d-4000-8000-00000000000a"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"b83b3d9f-5e3d-4000-8000-00000000000a","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620625754}',75,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',76,NULL,NULL,'2026-12-07T05:17:05.766Z',NULL,9);
INSERT INTO sandbox_projection VALUES('a4834a51-5e3d-4000-8000-000000000005','openshell-agents','stopped-1','healthy','','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-1","uid":"a4834a51-5e3d-4000-8000-000000000005","generation":2,"api_version":"v1beta1","deleting":false,"should_run":true,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":3,"workload_uid":"3b812268-5e3d-4000-8000-00000000002f","supervisor_uid":"9d8c0b82-5e3d-4000-8000-00000000002e"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"3b812268-5e3d-4000-8000-00000000002f","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"9d8c0b82-5e3d-4000-8000-00000000002e","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620630301}',97,'{"verdict":"healthy","reason":"","action":"none","note":"","reevaluate_at_ms":null}',98,NULL,NULL,'2026-12-07T05:17:10.301Z',NULL,6);
INSERT INTO sandbox_projection VALUES('b187d674-5e3d-4000-8000-00000000000f','openshell-agents','stopped-6','hold','fence-stale','none',1,'{"sandbox":{"namespace":"openshell-agents","name":"stopped-6","uid":"b187d674-5e3d-4000-8000-00000000000f","generation":1,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"gone-stopped-6","supervisor_uid":"395d1fe6-5e3d-4000-8000-00000000000e"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"395d1fe6-5e3d-4000-8000-00000000000e","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620625754}',79,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',80,NULL,NULL,'2026-12-07T05:17:05.766Z',NULL,11);
INSERT INTO sandbox_projection VALUES('babc6cf2-5e3d-4000-8000-000000000017','openshell-agents','active-2','hold','fence-stale','none',2,'{"sandbox":{"namespace":"openshell-agents","name":"active-2","uid":"babc6cf2-5e3d-4000-8000-000000000017","generation":2,"api_version":"v1beta1","deleting":false,"should_run":false,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"b7c7b700-5e3d-4000-8000-000000000002","fence_generation":1,"workload_uid":"07274e26-5e3d-4000-8000-000000000015","supervisor_uid":"a063da3e-5e3d-4000-8000-000000000016"},"workload_fence":{"present":true,"uid":"b7c7b700-5e3d-4000-8000-000000000002","generation":3,"intact":true},"supervisor_fence":{"present":true,"uid":"46251f5b-5e3d-4000-8000-000000000003","generation":1,"intact":true},"workload_pod":{"present":false,"uid":"","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"a063da3e-5e3d-4000-8000-000000000016","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":2},"observed_at_ms":1796620625754}',67,'{"verdict":"hold","reason":"fence-stale","action":"none","note":"already fail-closed; fence generation 1 -> 3","reevaluate_at_ms":null}',68,NULL,2,'2026-12-07T05:17:05.766Z',NULL,4);
INSERT INTO sandbox_projection VALUES('75d2163a-5e3d-4000-8000-000000000023','team-healthy','healthy-2','healthy','','none',1,'{"sandbox":{"namespace":"team-healthy","name":"healthy-2","uid":"75d2163a-5e3d-4000-8000-000000000023","generation":1,"api_version":"v1beta1","deleting":false,"should_run":true,"bootstrapping":false,"bootstrap_op":"","bootstrap_phase":"","bootstrap_started_at_ms":null,"fence_uid":"cc66117f-5e3d-4000-8000-00000000001c","fence_generation":1,"workload_uid":"0a29e2ac-5e3d-4000-8000-000000000021","supervisor_uid":"0bff360b-5e3d-4000-8000-000000000022"},"workload_fence":{"present":true,"uid":"cc66117f-5e3d-4000-8000-00000000001c","generation":1,"intact":true},"supervisor_fence":{"present":true,"uid":"6413038c-5e3d-4000-8000-00000000001d","generation":1,"intact":true},"workload_pod":{"present":true,"uid":"0a29e2ac-5e3d-4000-8000-000000000021","scheduling_gated":false},"supervisor_pod":{"present":true,"uid":"0bff360b-5e3d-4000-8000-000000000022","scheduling_gated":false},"history":{"pending_intent_seq":null,"applied_generation":null},"observed_at_ms":1796620619617}',27,'{"verdict":"healthy","reason":"","action":"none","note":"","reevaluate_at_ms":null}',28,NULL,NULL,'2026-12-07T05:16:59.657Z',NULL,16);
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
INSERT INTO writer_starts VALUES(1,1,'3883aed009655f7faca9071cc0994518','2026-12-07T05:16:59.485Z');
INSERT INTO writer_starts VALUES(2,99,'60add9d16ea3a97302b2828a7ae03e3f','2026-12-07T05:17:18.205Z');
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
CREATE INDEX writer_starts_seq ON writer_starts (first_seq);
CREATE TRIGGER writer_starts_append_only_update BEFORE UPDATE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
END;
CREATE TRIGGER writer_starts_append_only_delete BEFORE DELETE ON writer_starts
BEGIN
  SELECT RAISE(ABORT, 'fencekeeper writer starts are append-only');
END;
COMMIT;
PRAGMA application_id = 1179339313;
PRAGMA user_version = 8;
