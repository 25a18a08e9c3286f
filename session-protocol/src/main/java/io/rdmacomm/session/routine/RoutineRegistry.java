package io.rdmacomm.session.routine;

import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The routines a server offers, by name. Immutable once built. */
public final class RoutineRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(RoutineRegistry.class);
    private static final Pattern NAME = Pattern.compile("[a-z0-9._-]{1,64}");

    private final Map<String, Routine> byName;

    private RoutineRegistry(Map<String, Routine> byName) {
        this.byName = Collections.unmodifiableMap(byName);
    }

    /** The built-in routines and every plugin {@code loader} finds; a plugin may not replace a built-in. */
    public static RoutineRegistry load(ClassLoader loader) {
        Map<String, Routine> map = new TreeMap<>();
        for (Routine r : BuiltinRoutines.all()) {
            map.put(r.name(), r);
        }
        for (Routine r : ServiceLoader.load(Routine.class, loader)) {
            if (!isValidName(r.name())) {
                throw new IllegalStateException("routine plugin " + r.getClass().getName() + " has an invalid name '"
                        + r.name() + "' (lower-case letters, digits, '.', '_' or '-', at most 64)");
            }
            if (map.containsKey(r.name())) {
                throw new IllegalStateException("routine plugin " + r.getClass().getName() + " reuses the name '"
                        + r.name() + "' of " + map.get(r.name()).getClass().getName());
            }
            LOG.info("routine plugin '{}' from {}", r.name(), r.getClass().getName());
            map.put(r.name(), r);
        }
        return new RoutineRegistry(map);
    }

    /** The built-ins only. */
    public static RoutineRegistry builtins() {
        Map<String, Routine> map = new TreeMap<>();
        for (Routine r : BuiltinRoutines.all()) {
            map.put(r.name(), r);
        }
        return new RoutineRegistry(map);
    }

    /** Whether {@code name} is a well-formed routine name. */
    public static boolean isValidName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    public Optional<Routine> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The routines in name order. */
    public Collection<Routine> routines() {
        return byName.values();
    }
}
