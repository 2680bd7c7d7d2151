extends CharacterBody2D
## The player moves with the arrow keys and shoots with the mouse.

signal hit

@export var speed: int = 400
@export var max_health := 3:
	set(value):
		max_health = value
@onready var sprite: AnimatedSprite2D = $AnimatedSprite2D

var screen_size: Vector2


func _ready() -> void:
	screen_size = get_viewport_rect().size
	hit.connect(_on_hit)
	hide()


func _physics_process(_delta: float) -> void:
	var direction := Input.get_vector(&"move_left", &"move_right", &"move_up", &"move_down")
	if Input.is_mouse_button_pressed(MOUSE_BUTTON_LEFT):
		shoot()
	velocity = direction * speed
	move_and_slide()
	position.x = clampf(position.x, 0, screen_size.x)


func shoot() -> void:
	var bullet: Node2D = preload("res://bullet.tscn").instantiate()
	bullet.position = position
	get_parent().add_child(bullet)
	await get_tree().create_timer(0.2).timeout
	sprite.play(&"idle")


func _on_hit() -> void:
	var tween := create_tween()
	tween.tween_property(sprite, "modulate", Color.RED, 0.2)
	get_window().mode = Window.MODE_WINDOWED
	var save := FileAccess.open("user://score.save", FileAccess.WRITE)
	save.store_line(str(randf_range(0, 10)))
