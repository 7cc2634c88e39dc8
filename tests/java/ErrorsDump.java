// Dumps org.apache.kafka.common.protocol.Errors as JSON lines, one per error:
// {"code":..,"name":"..","retriable":..,"exception":"..","message":".."}
// Compiled and run against the pinned kafka-clients jar by tests/test_errors.py.

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

public final class ErrorsDump {
    private ErrorsDump() { }

    private static String json(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20 || c > 0x7e) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) {
        for (Errors e : Errors.values()) {
            ApiException ex = e.exception();
            boolean retriable = ex instanceof RetriableException;
            System.out.println("{\"code\":" + e.code()
                + ",\"name\":" + json(e.name())
                + ",\"retriable\":" + retriable
                + ",\"exception\":" + json(ex == null ? null : ex.getClass().getSimpleName())
                + ",\"message\":" + json(e.message())
                + "}");
        }
    }
}
