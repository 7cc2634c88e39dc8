// Builds and reads record batches with Apache Kafka's own classes, for tests/test_records_java.py.
// Compiled and run against the pinned Kafka 4.3.1 jars. One command per stdin line, one JSON line out:
//
//   control <baseOffset> <epoch> <timeMs> <type>:<hexValue>...  -> {"hex"}  LeaderState.createControlRecordsBuilder
//   data <baseOffset> <epoch> <timeMs> v:<hexValue>...           -> {"hex"}  raft BatchBuilder (KRaft data batches)
//   build <codec> <baseOffset> <epoch> <count>                   -> {"hex"}  MemoryRecordsBuilder, the shared recipe
//   decode <hex>                                                 -> {"batches": [...]} every batch, ensureValid()'d
//
// The recipe of "build" is repeated in the Python test; keep the two in step.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.protocol.Writable;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.raft.internals.BatchBuilder;
import org.apache.kafka.server.common.serialization.RecordSerde;

public final class RecordsDiff {
    private static final HexFormat HEX = HexFormat.of();

    private RecordsDiff() { }

    /** Values as raw bytes, the way MetadataRecordSerde hands BatchBuilder its framed records. */
    private static final class BytesSerde implements RecordSerde<byte[]> {
        @Override
        public int recordSize(byte[] data, ObjectSerializationCache cache) {
            return data.length;
        }

        @Override
        public void write(byte[] data, ObjectSerializationCache cache, Writable out) {
            out.writeByteArray(data);
        }

        @Override
        public byte[] read(Readable input, int size) {
            return input.readArray(size);
        }
    }

    private static String hex(ByteBuffer buffer) {
        if (buffer == null) {
            return "null";
        }
        ByteBuffer dup = buffer.duplicate();
        byte[] bytes = new byte[dup.remaining()];
        dup.get(bytes);
        return "\"" + HEX.formatHex(bytes) + "\"";
    }

    private static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    private static String out(MemoryRecords records) {
        return "{\"hex\":" + hex(records.buffer()) + "}";
    }

    private static String control(String[] args) {
        long baseOffset = Long.parseLong(args[1]);
        int epoch = Integer.parseInt(args[2]);
        long now = Long.parseLong(args[3]);
        ByteBuffer buffer = ByteBuffer.allocate(1 << 20);
        // The arguments of LeaderState.createControlRecordsBuilder, in order.
        try (MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, baseOffset, now, RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, true, epoch, buffer.capacity())) {
            for (int i = 4; i < args.length; i++) {
                String[] item = args[i].split(":", -1);
                ControlRecordType type = ControlRecordType.fromTypeId(Short.parseShort(item[0]));
                builder.appendControlRecord(now, type, ByteBuffer.wrap(HEX.parseHex(item[1])));
            }
            return out(builder.build());
        }
    }

    private static String data(String[] args) {
        long baseOffset = Long.parseLong(args[1]);
        int epoch = Integer.parseInt(args[2]);
        long now = Long.parseLong(args[3]);
        BatchBuilder<byte[]> builder = new BatchBuilder<>(ByteBuffer.allocate(1 << 20), new BytesSerde(),
            Compression.NONE, baseOffset, now, epoch, 1 << 20);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        for (int i = 4; i < args.length; i++) {
            builder.appendRecord(HEX.parseHex(args[i].substring(2)), cache);
        }
        return out(builder.build());
    }

    private static Compression compression(String name) {
        return Compression.of(CompressionType.forName(name)).build();
    }

    // The shared recipe: see _recipe() in tests/test_records_java.py.
    private static String build(String[] args) {
        long baseOffset = Long.parseLong(args[2]);
        int epoch = Integer.parseInt(args[3]);
        int count = Integer.parseInt(args[4]);
        ByteBuffer buffer = ByteBuffer.allocate(64 << 20);
        try (MemoryRecordsBuilder builder = new MemoryRecordsBuilder(buffer, RecordBatch.CURRENT_MAGIC_VALUE,
                compression(args[1]), TimestampType.CREATE_TIME, baseOffset, RecordBatch.NO_TIMESTAMP,
                RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, false,
                epoch, buffer.capacity())) {
            for (int i = 0; i < count; i++) {
                long timestamp = 1_700_000_000_000L + (i * 7919L) % 5000 - 2500;
                byte[] key = i % 5 == 0 ? null : ("k" + i).getBytes(StandardCharsets.UTF_8);
                byte[] value;
                if (i % 11 == 0) {
                    value = null;
                } else {
                    value = new byte[i % 7 == 0 ? 0 : (i * 37) % 600];
                    for (int j = 0; j < value.length; j++) {
                        value[j] = (byte) ((i + j / 3) % 251);
                    }
                }
                Header[] headers = i % 3 == 0
                    ? new Header[] {new RecordHeader("h" + (i % 2), new byte[] {(byte) i}), new RecordHeader("n", null)}
                    : new Header[0];
                builder.append(timestamp, key, value, headers);
            }
            return out(builder.build());
        }
    }

    private static String decode(String[] args) {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(HEX.parseHex(args[1])));
        StringBuilder b = new StringBuilder("{\"batches\":[");
        boolean firstBatch = true;
        for (MutableRecordBatch batch : records.batches()) {
            batch.ensureValid();
            if (!firstBatch) {
                b.append(',');
            }
            firstBatch = false;
            b.append("{\"baseOffset\":").append(batch.baseOffset())
                .append(",\"lastOffset\":").append(batch.lastOffset())
                .append(",\"epoch\":").append(batch.partitionLeaderEpoch())
                .append(",\"crc\":").append(batch.checksum())
                .append(",\"compression\":").append(batch.compressionType().id)
                .append(",\"control\":").append(batch.isControlBatch())
                .append(",\"transactional\":").append(batch.isTransactional())
                .append(",\"logAppendTime\":").append(batch.timestampType() == TimestampType.LOG_APPEND_TIME)
                .append(",\"maxTimestamp\":").append(batch.maxTimestamp())
                .append(",\"producerId\":").append(batch.producerId())
                .append(",\"producerEpoch\":").append(batch.producerEpoch())
                .append(",\"baseSequence\":").append(batch.baseSequence())
                .append(",\"records\":[");
            boolean firstRecord = true;
            for (Record record : batch) {
                if (!firstRecord) {
                    b.append(',');
                }
                firstRecord = false;
                b.append("{\"offset\":").append(record.offset())
                    .append(",\"timestamp\":").append(record.timestamp())
                    .append(",\"key\":").append(hex(record.key()))
                    .append(",\"value\":").append(hex(record.value()))
                    .append(",\"headers\":[");
                Header[] headers = record.headers();
                for (int i = 0; i < headers.length; i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    byte[] v = headers[i].value();
                    b.append('[').append(json(headers[i].key())).append(',')
                        .append(v == null ? "null" : "\"" + HEX.formatHex(v) + "\"").append(']');
                }
                b.append("]}");
            }
            b.append("]}");
        }
        return b.append("]}").toString();
    }

    public static void main(String[] argv) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            String[] args = line.trim().split(" ");
            String reply;
            try {
                switch (args[0]) {
                    case "control": reply = control(args); break;
                    case "data": reply = data(args); break;
                    case "build": reply = build(args); break;
                    case "decode": reply = decode(args); break;
                    default: reply = "{\"error\":" + json("unknown command " + args[0]) + "}";
                }
            } catch (RuntimeException e) {
                reply = "{\"error\":" + json(e.toString()) + "}";
            }
            System.out.println(reply);
        }
    }
}
