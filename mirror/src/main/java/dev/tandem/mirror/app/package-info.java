/**
 * The mirror as a Spring Boot app on {@code tandem-spring-boot-starter}: configured only by
 * {@code tandem.*} properties ({@code tandem.mirror.*} for the mirror), with
 * {@code /actuator/kafkamirror}, Micrometer meters and a health indicator.
 */
@NullMarked
package dev.tandem.mirror.app;

import org.jspecify.annotations.NullMarked;
