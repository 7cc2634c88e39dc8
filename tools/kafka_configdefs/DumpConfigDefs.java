// Writes the facts kraft-server needs about Kafka's config definitions (names, types,
// defaults, validators, synonyms, which broker configs are dynamic) as JSON on stdout.
// Run by ``python -m tools.kafka_configdefs`` against the pinned Kafka jars; no prose.
import java.lang.reflect.Field;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;

public class DumpConfigDefs {
    static String q(Object o) {
        if (o == null) return "null";
        String s = o.toString();
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static Object get(Object o, String name) throws Exception {
        for (Class<?> k = o.getClass(); k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) { /* try the parent */ }
        }
        return null;
    }

    static String list(Collection<?> items) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (Object i : items) j.add(q(i));
        return j.toString();
    }

    static String validator(ConfigDef.Validator v) throws Exception {
        if (v == null) return "null";
        String kind = v.getClass().getSimpleName();
        StringBuilder b = new StringBuilder("{\"kind\":" + q(kind) + ",\"text\":" + q(v.toString()));
        if (v instanceof ConfigDef.Range) {
            b.append(",\"min\":").append(q(get(v, "min"))).append(",\"max\":").append(q(get(v, "max")));
        } else if (v instanceof ConfigDef.ValidString || v instanceof ConfigDef.CaseInsensitiveValidString) {
            b.append(",\"values\":").append(list((Collection<?>) get(v, "validStrings")));
        } else if (v instanceof ConfigDef.ValidList) {
            Object inner = get(v, "validString");
            b.append(",\"values\":").append(list((Collection<?>) get(inner, "validStrings")));
            Object empty = get(v, "isEmptyAllowed");
            if (empty != null) b.append(",\"empty_allowed\":").append(empty);
        }
        return b.append('}').toString();
    }

    static String key(ConfigDef.ConfigKey k, String extra) throws Exception {
        String dflt = k.hasDefault() ? q(ConfigDef.convertToString(k.defaultValue, k.type)) : "null";
        return "{\"name\":" + q(k.name) + ",\"type\":" + q(k.type) + ",\"has_default\":" + k.hasDefault()
            + ",\"default\":" + dflt + ",\"internal\":" + k.internalConfig
            + ",\"validator\":" + validator(k.validator) + extra + "}";
    }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder("{\n\"topic\":[\n");
        Map<String, List<org.apache.kafka.server.config.ConfigSynonym>> syn =
            org.apache.kafka.server.config.ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS;
        StringJoiner topics = new StringJoiner(",\n");
        for (ConfigDef.ConfigKey k : new TreeMap<>(org.apache.kafka.storage.internals.log.LogConfig.configKeys()).values()) {
            List<String> names = new ArrayList<>();
            for (org.apache.kafka.server.config.ConfigSynonym s : syn.getOrDefault(k.name, List.of())) names.add(s.name());
            topics.add(key(k, ",\"server_synonyms\":" + list(names)));
        }
        out.append(topics).append("\n],\n\"broker\":[\n");
        ConfigDef def = kafka.server.KafkaConfig$.MODULE$.configDef();
        Set<String> dynamic = org.apache.kafka.server.config.DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS;
        StringJoiner brokers = new StringJoiner(",\n");
        for (ConfigDef.ConfigKey k : new TreeMap<>(def.configKeys()).values()) {
            List<String> names = org.apache.kafka.server.config.DynamicBrokerConfig.brokerConfigSynonyms(k.name, true);
            brokers.add(key(k, ",\"dynamic\":" + dynamic.contains(k.name) + ",\"synonyms\":" + list(names)));
        }
        out.append(brokers).append("\n],\n\"group\":[\n");
        StringJoiner groups = new StringJoiner(",\n");
        for (ConfigDef.ConfigKey k : new TreeMap<>(org.apache.kafka.coordinator.group.GroupConfig.CONFIG_DEF.configKeys()).values()) {
            List<String> names = new ArrayList<>();
            org.apache.kafka.coordinator.group.GroupConfig.brokerSynonym(k.name).ifPresent(names::add);
            groups.add(key(k, ",\"server_synonyms\":" + list(names)));
        }
        out.append(groups).append("\n],\n\"client_metrics\":[\n");
        StringJoiner metrics = new StringJoiner(",\n");
        for (ConfigDef.ConfigKey k : new TreeMap<>(org.apache.kafka.server.metrics.ClientMetricsConfigs.configDef().configKeys()).values()) {
            metrics.add(key(k, ",\"server_synonyms\":[]"));
        }
        out.append(metrics).append("\n]\n}\n");
        System.out.print(out);
    }
}
