// kraft-server's differential codec tester: Apache Kafka's own generated message
// classes judge the bytes our Python codecs produce.
//
// One long-lived JVM. Each stdin line is a JSON request; each answer is one JSON
// line on stdout. A request is either a single check or {"batch": [check, ...]}
// (answered by {"results": [reply, ...]}), so a caller can send many checks per
// round trip without filling a pipe.
//
// Modes ("mode", default "message"):
//   message     {"class", "version", "json", "bytes"}: A = <Class>JsonConverter.read(json,
//               version); Kafka's encoding of A must equal our bytes; Kafka parses our bytes
//               into B, consuming all of them, and A.equals(B).
//   reparse     {"class", "version", "bytes"}: Kafka parses our bytes (all consumed) and
//               re-serialises them to the same bytes (exercises unknown tagged fields,
//               which the JSON form cannot carry).
//   tojson      {"class", "version", "bytes"}: Kafka's parse of our bytes as JSON (debugging).
//   records     {"bytes", "batches": [...]}: MemoryRecords.readableRecords over our bytes;
//               every batch must pass ensureValid() and match the expected batch fields and
//               records (see checkRecords).
//   metadata    {"bytes"}: MetadataRecordSerde.read over our whole __cluster_metadata record
//               value (frame version, type, version, message; nothing may be left over), then
//               MetadataRecordSerde.write of what it read. Answers {"ok": true, "api_key",
//               "version", "class" (simple name), "bytes" (base64 of Kafka's re-serialisation,
//               or "write_error" when Kafka cannot write back what it read)} or
//               {"ok": false, "error"} when Kafka refuses the value.
//   metadata_types  answers {"ok": true, "types": [{"name", "id", "lowest", "highest",
//               "class"}, ...]}: every MetadataRecordType of the jar.
//   error_response  {"api_key", "version", "bytes" (a request body), "error_code", "message"
//               (null for none)}: AbstractRequest.parseRequest over the bytes, then
//               getErrorResponse(0, Errors.forCode(code).exception(message)). Answers {"ok": true,
//               "bytes" (base64 of the response body at that version)}, {"ok": true, "null": true}
//               when Kafka answers nothing (Produce with acks 0), or {"ok": false, "stage":
//               "parse" | "error_response" | "serialize", "error"} naming where Kafka failed.
//   ping        answers {"ok": true, "kafka": <version>}.
//
// A reply is {"ok": true} or {"ok": false, "error": "...", ...} with, when available,
// "java_bytes" (base64 of Kafka's encoding) and Kafka's JSON of what it built/parsed.
// "class" is a fully qualified class name or a simple one, looked up in Kafka's generated
// message packages.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

public final class CodecTester {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String[] PACKAGES = {
        "org.apache.kafka.common.message.",
        "org.apache.kafka.common.metadata.",
        "org.apache.kafka.raft.generated.",
    };

    /** Reflection handles for one generated message class. */
    private static final class Codec {
        final Constructor<?> reader;   // new X(Readable, short)
        final Method fromJson;         // XJsonConverter.read(JsonNode, short)
        final Method toJson;           // XJsonConverter.write(X, short)

        Codec(Class<?> cls) throws ReflectiveOperationException {
            reader = cls.getConstructor(Readable.class, short.class);
            Class<?> conv = Class.forName(cls.getName() + "JsonConverter");
            fromJson = conv.getMethod("read", JsonNode.class, short.class);
            toJson = conv.getMethod("write", cls, short.class);
        }
    }

    private static final Map<String, Codec> CODECS = new HashMap<>();

    private static Codec codec(String name) throws ReflectiveOperationException {
        Codec c = CODECS.get(name);
        if (c != null) return c;
        Class<?> cls = null;
        if (name.contains(".")) {
            cls = Class.forName(name);
        } else {
            for (String pkg : PACKAGES) {
                try {
                    cls = Class.forName(pkg + name);
                    break;
                } catch (ClassNotFoundException ignored) {
                    // try the next package
                }
            }
            if (cls == null) throw new ClassNotFoundException(name + " in " + Arrays.toString(PACKAGES));
        }
        c = new Codec(cls);
        CODECS.put(name, c);
        return c;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), false);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode reply;
            try {
                JsonNode req = MAPPER.readTree(line);
                if (req.has("batch")) {
                    ArrayNode results = NODES.arrayNode();
                    for (JsonNode one : req.get("batch")) results.add(handle(one));
                    ObjectNode r = NODES.objectNode();
                    r.set("results", results);
                    reply = r;
                } else {
                    reply = handle(req);
                }
            } catch (Throwable t) {
                reply = failure("bad request: " + describe(t));
            }
            out.println(MAPPER.writeValueAsString(reply));
            out.flush();
        }
    }

    private static JsonNode handle(JsonNode req) {
        String mode = req.has("mode") ? req.get("mode").asText() : "message";
        try {
            switch (mode) {
                case "message": return checkMessage(req);
                case "reparse": return checkReparse(req);
                case "tojson": return toJson(req);
                case "records": return checkRecords(req);
                case "metadata": return readMetadataRecord(req);
                case "metadata_types": return metadataTypes();
                case "error_response": return errorResponse(req);
                case "ping": {
                    ObjectNode r = ok();
                    r.put("kafka", kafkaVersion());
                    return r;
                }
                default: return failure("unknown mode " + mode);
            }
        } catch (Throwable t) {
            return failure(describe(t));
        }
    }

    // -- messages -------------------------------------------------------------------------

    private static byte[] serialize(Message m, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = m.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        m.write(new ByteBufferAccessor(buf), cache, version);
        if (buf.position() != size) {
            throw new IllegalStateException("Kafka wrote " + buf.position() + " bytes but sized " + size);
        }
        return buf.array();
    }

    /** Kafka parses bytes; the message, or an exception naming unconsumed bytes. */
    private static Message parse(Codec c, byte[] bytes, short version) throws Throwable {
        ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(bytes));
        Message m;
        try {
            m = (Message) c.reader.newInstance(acc, version);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
        if (acc.remaining() != 0) {
            throw new IllegalStateException("Kafka's parse left " + acc.remaining() + " of "
                + bytes.length + " bytes unread");
        }
        return m;
    }

    private static JsonNode json(Codec c, Message m, short version) {
        try {
            return (JsonNode) c.toJson.invoke(null, m, version);
        } catch (Throwable t) {
            return NODES.textNode("<JsonConverter.write failed: " + describe(t) + ">");
        }
    }

    private static JsonNode checkMessage(JsonNode req) throws Throwable {
        Codec c = codec(req.get("class").asText());
        short version = (short) req.get("version").asInt();
        byte[] ours = Base64.getDecoder().decode(req.get("bytes").asText());
        Message a;
        try {
            a = (Message) c.fromJson.invoke(null, req.get("json"), version);
        } catch (InvocationTargetException e) {
            return failure("JsonConverter.read rejected the JSON: " + describe(e.getCause()));
        }
        byte[] theirs;
        try {
            theirs = serialize(a, version);
        } catch (Throwable t) {
            ObjectNode r = failure("Kafka could not serialise the object: " + describe(t));
            r.set("java_json", json(c, a, version));
            return r;
        }
        if (!Arrays.equals(theirs, ours)) {
            ObjectNode r = failure("bytes differ: ours " + ours.length + " bytes, Kafka's "
                + theirs.length + " bytes, first difference at offset " + firstDifference(ours, theirs));
            r.put("java_bytes", Base64.getEncoder().encodeToString(theirs));
            r.set("java_json", json(c, a, version));
            return r;
        }
        Message b;
        try {
            b = parse(c, ours, version);
        } catch (Throwable t) {
            return failure("Kafka could not parse our bytes: " + describe(t));
        }
        if (!a.equals(b)) {
            ObjectNode r = failure("Kafka's parse of our bytes differs from the object built from JSON");
            r.set("java_json", json(c, a, version));
            r.set("parsed_json", json(c, b, version));
            return r;
        }
        return ok();
    }

    private static JsonNode checkReparse(JsonNode req) throws Throwable {
        Codec c = codec(req.get("class").asText());
        short version = (short) req.get("version").asInt();
        byte[] ours = Base64.getDecoder().decode(req.get("bytes").asText());
        Message b;
        try {
            b = parse(c, ours, version);
        } catch (Throwable t) {
            return failure("Kafka could not parse our bytes: " + describe(t));
        }
        byte[] again = serialize(b, version);
        if (!Arrays.equals(again, ours)) {
            ObjectNode r = failure("Kafka re-serialised our bytes differently: first difference at offset "
                + firstDifference(ours, again));
            r.put("java_bytes", Base64.getEncoder().encodeToString(again));
            r.set("parsed_json", json(c, b, version));
            return r;
        }
        return ok();
    }

    private static JsonNode toJson(JsonNode req) throws Throwable {
        Codec c = codec(req.get("class").asText());
        short version = (short) req.get("version").asInt();
        byte[] ours = Base64.getDecoder().decode(req.get("bytes").asText());
        Message b = parse(c, ours, version);
        ObjectNode r = ok();
        r.set("json", json(c, b, version));
        r.put("string", b.toString());
        return r;
    }

    // -- a request's generic error answer ---------------------------------------------------

    private static JsonNode errorResponse(JsonNode req) {
        ApiKeys key = ApiKeys.forId(req.get("api_key").asInt());
        short version = (short) req.get("version").asInt();
        byte[] body = Base64.getDecoder().decode(req.get("bytes").asText());
        Errors error = Errors.forCode((short) req.get("error_code").asInt());
        JsonNode m = req.get("message");
        String message = m == null || m.isNull() ? null : m.asText();
        AbstractRequest request;
        try {
            ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(body));
            request = AbstractRequest.parseRequest(key, version, acc).request;
        } catch (Throwable t) {
            return stageFailure("parse", t);
        }
        AbstractResponse response;
        try {
            response = request.getErrorResponse(0, error.exception(message));
        } catch (Throwable t) {
            return stageFailure("error_response", t);
        }
        ObjectNode r = ok();
        if (response == null) {
            r.put("null", true);
            return r;
        }
        try {
            r.put("bytes", Base64.getEncoder().encodeToString(serialize(response.data(), version)));
        } catch (Throwable t) {
            return stageFailure("serialize", t);
        }
        return r;
    }

    private static ObjectNode stageFailure(String stage, Throwable t) {
        ObjectNode r = failure(describe(t));
        r.put("stage", stage);
        return r;
    }

    // -- metadata record values ------------------------------------------------------------

    private static JsonNode readMetadataRecord(JsonNode req) {
        byte[] ours = Base64.getDecoder().decode(req.get("bytes").asText());
        ApiMessageAndVersion read;
        try {
            read = MetadataRecordSerde.INSTANCE.read(
                new ByteBufferAccessor(ByteBuffer.wrap(ours)), ours.length);
        } catch (Throwable t) {
            StringBuilder why = new StringBuilder(describe(t));
            for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                why.append(" caused by ").append(describe(c));
            }
            return failure("MetadataRecordSerde refused the value: " + why);
        }
        ObjectNode r = ok();
        ApiMessage m = read.message();
        r.put("api_key", (int) m.apiKey());
        r.put("version", (int) read.version());
        r.put("class", m.getClass().getSimpleName());
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = MetadataRecordSerde.INSTANCE.recordSize(read, cache);
            ByteBuffer buf = ByteBuffer.allocate(size);
            MetadataRecordSerde.INSTANCE.write(read, cache, new ByteBufferAccessor(buf));
            r.put("bytes", Base64.getEncoder().encodeToString(buf.array()));
        } catch (Throwable t) {  // read, but cannot be written back (e.g. unknown tags out of order)
            r.put("write_error", describe(t));
        }
        return r;
    }

    private static JsonNode metadataTypes() {
        ArrayNode types = NODES.arrayNode();
        for (MetadataRecordType t : MetadataRecordType.values()) {
            ObjectNode o = NODES.objectNode();
            o.put("name", t.name());
            o.put("id", (int) t.id());
            o.put("lowest", (int) t.lowestSupportedVersion());
            o.put("highest", (int) t.highestSupportedVersion());
            o.put("class", t.newMetadataRecord().getClass().getSimpleName());
            types.add(o);
        }
        ObjectNode r = ok();
        r.set("types", types);
        return r;
    }

    // -- record batches -------------------------------------------------------------------

    /**
     * Our record-batch bytes read by Kafka. Each expected batch in "batches" may give
     * baseOffset, lastOffset, partitionLeaderEpoch, magic, attributes fields (producerId,
     * producerEpoch, baseSequence, isTransactional, isControlBatch, timestampType,
     * maxTimestamp, compressionType) and "records": [{offset, timestamp, key, value,
     * headers: [[key, value], ...]}] with key/value/header values base64 or null.
     * Missing keys are not checked. The reply also carries what Kafka saw ("seen").
     */
    private static JsonNode checkRecords(JsonNode req) {
        byte[] ours = Base64.getDecoder().decode(req.get("bytes").asText());
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(ours));
        ArrayNode seen = NODES.arrayNode();
        int total = 0;
        try {
            for (MutableRecordBatch batch : records.batches()) {
                batch.ensureValid();
                ObjectNode b = NODES.objectNode();
                b.put("baseOffset", batch.baseOffset());
                b.put("lastOffset", batch.lastOffset());
                b.put("partitionLeaderEpoch", batch.partitionLeaderEpoch());
                b.put("magic", (int) batch.magic());
                b.put("producerId", batch.producerId());
                b.put("producerEpoch", (int) batch.producerEpoch());
                b.put("baseSequence", batch.baseSequence());
                b.put("isTransactional", batch.isTransactional());
                b.put("isControlBatch", batch.isControlBatch());
                b.put("timestampType", batch.timestampType().id);
                b.put("maxTimestamp", batch.maxTimestamp());
                b.put("compressionType", batch.compressionType().id);
                b.put("sizeInBytes", batch.sizeInBytes());
                b.put("checksum", batch.checksum());
                ArrayNode recs = NODES.arrayNode();
                Iterator<Record> it = batch.iterator();
                while (it.hasNext()) {
                    Record rec = it.next();
                    rec.ensureValid();
                    ObjectNode r = NODES.objectNode();
                    r.put("offset", rec.offset());
                    r.put("timestamp", rec.timestamp());
                    r.set("key", b64(rec.hasKey() ? rec.key() : null));
                    r.set("value", b64(rec.hasValue() ? rec.value() : null));
                    ArrayNode hs = NODES.arrayNode();
                    for (Header h : rec.headers()) {
                        ArrayNode pair = NODES.arrayNode();
                        pair.add(h.key());
                        pair.add(h.value() == null ? NODES.nullNode() : NODES.textNode(
                            Base64.getEncoder().encodeToString(h.value())));
                        hs.add(pair);
                    }
                    r.set("headers", hs);
                    recs.add(r);
                }
                b.set("records", recs);
                seen.add(b);
                total += batch.sizeInBytes();
            }
        } catch (Throwable t) {
            ObjectNode r = failure("Kafka rejected our batch: " + describe(t));
            r.set("seen", seen);
            return r;
        }
        ObjectNode reply;
        if (total != ours.length) {
            reply = failure("Kafka read " + total + " bytes of batches out of " + ours.length);
        } else {
            String diff = req.has("batches") ? compare(req.get("batches"), seen) : null;
            reply = diff == null ? ok() : failure(diff);
        }
        reply.set("seen", seen);
        return reply;
    }

    private static JsonNode b64(ByteBuffer buf) {
        if (buf == null) return NODES.nullNode();
        byte[] a = new byte[buf.remaining()];
        buf.duplicate().get(a);
        return NODES.textNode(Base64.getEncoder().encodeToString(a));
    }

    /** Every field the expectation names must equal what Kafka saw; null when all do. */
    private static String compare(JsonNode expected, JsonNode seen) {
        if (expected.size() != seen.size()) {
            return "expected " + expected.size() + " batches, Kafka saw " + seen.size();
        }
        for (int i = 0; i < expected.size(); i++) {
            String d = compareObject("batch " + i, expected.get(i), seen.get(i));
            if (d != null) return d;
        }
        return null;
    }

    private static String compareObject(String where, JsonNode exp, JsonNode got) {
        Iterator<Map.Entry<String, JsonNode>> fields = exp.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> e = fields.next();
            JsonNode g = got.get(e.getKey());
            JsonNode x = e.getValue();
            if (g == null) return where + ": Kafka has no " + e.getKey();
            if (x.isArray() && g.isArray() && x.size() == g.size() && x.size() > 0 && x.get(0).isObject()) {
                for (int i = 0; i < x.size(); i++) {
                    String d = compareObject(where + "." + e.getKey() + "[" + i + "]", x.get(i), g.get(i));
                    if (d != null) return d;
                }
            } else if (x.isNumber() && g.isNumber()) {
                if (x.asLong() != g.asLong()) {
                    return where + "." + e.getKey() + ": expected " + x + ", Kafka has " + g;
                }
            } else if (!x.equals(g)) {
                return where + "." + e.getKey() + ": expected " + x + ", Kafka has " + g;
            }
        }
        return null;
    }

    // -- helpers --------------------------------------------------------------------------

    private static int firstDifference(byte[] a, byte[] b) {
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) if (a[i] != b[i]) return i;
        return n;
    }


    /** The release of the Kafka classes on the classpath (AppInfoParser moved to
     * ``utils.internals`` in 4.4). */
    static String kafkaVersion() {
        for (String name : new String[] {"org.apache.kafka.common.utils.AppInfoParser",
                                         "org.apache.kafka.common.utils.internals.AppInfoParser"}) {
            try {
                return (String) Class.forName(name).getMethod("getVersion").invoke(null);
            } catch (ReflectiveOperationException e) {
                // not in this release: try the next name
            }
        }
        return "unknown";
    }

    private static ObjectNode ok() {
        ObjectNode r = NODES.objectNode();
        r.put("ok", true);
        return r;
    }

    private static ObjectNode failure(String error) {
        ObjectNode r = NODES.objectNode();
        r.put("ok", false);
        r.put("error", error);
        return r;
    }

    private static String describe(Throwable t) {
        if (t instanceof InvocationTargetException && t.getCause() != null) t = t.getCause();
        StringWriter sw = new StringWriter();
        sw.append(t.toString());
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < Math.min(4, st.length); i++) sw.append(" at ").append(st[i].toString());
        return sw.toString();
    }
}
