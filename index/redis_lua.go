package index

import (
	"embed"
	"fmt"
)

// The server-side scripts are Lua files in lua/: prelude.lua (the
// calling convention every script shares, the clock, generations and the
// helpers) and one file per script, each run after the prelude with the
// store's constants before it ([Redis.scriptConstants]).
//
//go:embed lua/*.lua
var luaFS embed.FS

// luaFile returns the text of lua/name.
func luaFile(name string) string {
	b, err := luaFS.ReadFile("lua/" + name)
	if err != nil {
		panic(fmt.Sprintf("index: embedded script %s: %v", name, err))
	}
	return string(b)
}

// luaPrelude is lua/prelude.lua.
var luaPrelude = luaFile("prelude.lua")

// luaLookupInsert is lua/lookup_insert.lua after the prelude.
var luaLookupInsert = luaPrelude + luaFile("lookup_insert.lua")

// luaRegister is lua/register.lua after the prelude.
var luaRegister = luaPrelude + luaFile("register.lua")

// luaBuckets is lua/buckets.lua after the prelude.
var luaBuckets = luaPrelude + luaFile("buckets.lua")

// luaCopies is lua/copies.lua after the prelude.
var luaCopies = luaPrelude + luaFile("copies.lua")

// luaResolve is lua/resolve.lua after the prelude.
var luaResolve = luaPrelude + luaFile("resolve.lua")

// luaFeatures returns the features of documents: ARGV[7…] = seqs.
// Reply: an array, per seq its features as a bulk string of its own (nil
// = not stored, "" = stored without features).
var luaFeatures = luaSeqRecords("f")

// luaVerdicts returns the recorded verdicts of documents, as luaFeatures
// does features ("" when none is recorded yet).
var luaVerdicts = luaSeqRecords("v")

// luaSeqRecords is lua/seq_records.lua after the prelude, reading the
// record kind ('f' features, 'v' verdict, 's' source, 't' template).
func luaSeqRecords(kind string) string {
	return "local KIND = " + luaQuote(kind) + "\n" + luaPrelude + luaFile("seq_records.lua")
}

// luaVerdict records verdicts: ARGV[7…] = (seq verdict)×n, first write
// wins; recording a verdict drops the document's lookup record. Reply:
// per seq one byte, 1 when stored or already set, 0 when the document is
// not stored.
var luaVerdict = luaSeqRecordOnce("v")

// luaSeqRecordOnce is lua/seq_record_once.lua after the prelude, writing
// the record kind ('v' verdict, 's' source, 't' template): a found record
// (found.go) keeps the earliest finder, any other the first write.
func luaSeqRecordOnce(kind string) string {
	return fmt.Sprintf("local KIND, FOUND = %s, %v\n", luaQuote(kind), isFoundKind(kind)) + luaPrelude + luaFile("seq_record_once.lua")
}

// luaIDs is lua/ids.lua after the prelude.
var luaIDs = luaPrelude + luaFile("ids.lua")

// luaKeepLookups is lua/keep_lookups.lua after the prelude.
var luaKeepLookups = luaPrelude + luaFile("keep_lookups.lua")

// luaMaintain is lua/maintain.lua after the prelude.
var luaMaintain = luaPrelude + luaFile("maintain.lua")
