package io.rdmacomm.api.support;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * VarHandles on a class's own fields, for the release stores and acquire loads of the hot paths, without a static
 * block of checked exceptions in each class.
 */
public final class FieldHandles {
    private FieldHandles() {
    }

    /**
     * The handle of field {@code name} of type {@code type} in the lookup's class ({@code MethodHandles.lookup()}
     * in that class).
     *
     * @throws ExceptionInInitializerError if there is no such field (a programming error, met at class load)
     */
    public static VarHandle of(MethodHandles.Lookup lookup, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(lookup.lookupClass(), name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
